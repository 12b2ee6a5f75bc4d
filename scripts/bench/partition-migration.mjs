// How long sql/0016 (the statistics partitioned by day) takes on an existing install, per million
// rows: a fresh PostgreSQL database is migrated to 0015, given LINKS links with DAYS days of
// statistics each (a visit_days row, two referrer rows and four breakdown rows per link and day),
// then 0016 is applied and timed. While it runs, a flush-like insert into visit_days is timed
// from a second connection: the migration holds the tables' locks, so that insert waits for it.
// Needs dist/ (npm run build) and PostgreSQL at BENCH_ADMIN_URL (default: the local server).
//   node scripts/bench/partition-migration.mjs [links, 10000] [days, 100]
import { randomBytes } from 'node:crypto'
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { migrate } from '../../dist/db/migrate.js'

const LINKS = Number(process.argv[2] ?? 10_000)
const DAYS = Number(process.argv[3] ?? 100)
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const SQL_DIR = fileURLToPath(new URL('../../sql/', import.meta.url))

const name = `bench_partitions_${randomBytes(4).toString('hex')}`
const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
await admin`create database ${admin(name)}`
const url = new URL(ADMIN_URL)
url.pathname = `/${name}`
const sql = postgres(url.toString(), { max: 2, onnotice: () => {} })
const before = mkdtempSync(join(tmpdir(), 'bench-partitions-'))
try {
  for (const f of readdirSync(SQL_DIR).filter((f) => /^\d{4}_.*\.sql$/.test(f) && f < '0016')) copyFileSync(join(SQL_DIR, f), join(before, f))
  await migrate(sql, before)
  const [user] = await sql`insert into users (username, display_name, password_hash) values ('bench', 'bench', 'x') returning id`
  await sql`insert into links (code, user_id, url, location) select 'P' || lpad(i::text, 7, '0'), ${user.id}, 'https://example.org/' || i, 'https://example.org/' || i from generate_series(1, ${LINKS}) i`
  const t0 = performance.now()
  await sql`insert into visit_days (code, day, humans, bots, uniques)
    select 'P' || lpad(i::text, 7, '0'), current_date - d, 10 + d, 1, 5 from generate_series(1, ${LINKS}) i, generate_series(0, ${DAYS - 1}) d`
  await sql`insert into visit_referrers (code, day, host, visits)
    select 'P' || lpad(i::text, 7, '0'), current_date - d, h, 3 from generate_series(1, ${LINKS}) i, generate_series(0, ${DAYS - 1}) d, unnest(array['direct', 'news.example.com']) h`
  await sql`insert into visit_dims (code, day, dim, value, visits)
    select 'P' || lpad(i::text, 7, '0'), current_date - d, m, 'x', 3 from generate_series(1, ${LINKS}) i, generate_series(0, ${DAYS - 1}) d, unnest(array['device', 'browser', 'os', 'country']) m`
  await sql`vacuum analyze`
  const rows = LINKS * DAYS * 7
  console.log(`seeded ${rows.toLocaleString('en')} rows (${(LINKS * DAYS).toLocaleString('en')} link-days) in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

  const started = performance.now()
  const migrating = migrate(sql, SQL_DIR)
  await new Promise((resolve) => setTimeout(resolve, 200))
  const writer = postgres(url.toString(), { max: 1, onnotice: () => {} })
  const w0 = performance.now()
  await writer`insert into visit_days (code, day, humans, bots) values ('P0000001', current_date, 1, 0)
    on conflict (code, day) do update set humans = visit_days.humans + 1`
  const waitedMs = performance.now() - w0
  await writer.end()
  await migrating
  const ms = performance.now() - started
  console.log(`| sql/0016 on ${rows.toLocaleString('en')} rows | ${(ms / 1000).toFixed(1)} s | ${((ms / 1000) * (1e6 / rows)).toFixed(1)} s per million rows | a flush's insert started 0.2 s in waited ${(waitedMs / 1000).toFixed(1)} s |`)
} finally {
  await sql.end()
  await admin`drop database ${admin(name)}`
  await admin.end()
  rmSync(before, { recursive: true, force: true })
}
