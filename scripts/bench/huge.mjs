// A data set of record size, generated inside PostgreSQL (generate_series, no API): LINKS links
// across ACCOUNTS accounts, and DAYS days of statistics (a day row, 2 referrer rows and 4
// breakdown rows a day) for the BUSY busiest links, in the day partitions of sql/0016. Then the
// statements the service runs, timed on it (p50 and p99 over SAMPLES runs each): a cold
// redirect's look-up (a random code of the whole set), one link's statistics over all the days,
// an owner's list, a create, the retention job dropping one day, the export of everything
// (time, and this process's peak RSS), and the database's size on disk.
// Needs dist/ (npm run build) and PostgreSQL at BENCH_ADMIN_URL (default: the local server).
// The scale is the default; a smaller one proves the script:
//   BENCH_HUGE=1 node scripts/bench/huge.mjs
//   BENCH_HUGE_LINKS=1000000 BENCH_HUGE_ACCOUNTS=20000 BENCH_HUGE_BUSY=1000 node scripts/bench/huge.mjs
// Generating the full set takes the better part of an hour: BENCH_KEEP=1 keeps the database, and
// BENCH_HUGE_DB=<its name> times the statements on it again without generating (same scale variables);
// BENCH_HUGE_GENERATE_ONLY=1 generates, keeps and stops; BENCH_HUGE_EXPORT=off skips the export
// (the better part of an hour at full scale), =only runs it alone.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { exportDatabase } from '../../dist/admin/export.js'
import { migrate } from '../../dist/db/migrate.js'
import { findLocations, insertLink, listLinks } from '../../dist/links/queries.js'
import { readStats, runStatsJob } from '../../dist/links/stats-queries.js'
import { median, runWrk } from './lib.mjs'
import { C_THROUGHPUT, SMALL_CACHE_BYTES } from './options.mjs'
import { start, stop } from './processes.mjs'

const int = (name, fallback) => Number(process.env[name] ?? fallback)
const LINKS = int('BENCH_HUGE_LINKS', 10_000_000)
const ACCOUNTS = int('BENCH_HUGE_ACCOUNTS', 200_000)
const BUSY = int('BENCH_HUGE_BUSY', 100_000)
const DAYS = int('BENCH_HUGE_DAYS', 400)
const SAMPLES = int('BENCH_HUGE_SAMPLES', 200)
const ROUNDS = int('BENCH_ROUNDS', 3)
const SECONDS = int('BENCH_SECONDS', 10)
/** Codes the cold redirects walk: random ones of the whole set, far more than the cache holds. */
const WALK = Math.min(LINKS, 1_000_000)
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const DAY_MS = 86_400_000
const say = (line) => process.stdout.write(`${line}\n`)
const code = (i) => `H${String(i).padStart(7, '0')}`
const dayOf = (offset) => new Date(Date.now() - offset * DAY_MS).toISOString().slice(0, 10)
const random = (n) => Math.floor(Math.random() * n)

const reuse = process.env.BENCH_HUGE_DB
const generateOnly = process.env.BENCH_HUGE_GENERATE_ONLY === '1'
const name = reuse ?? `bench_huge_${randomBytes(4).toString('hex')}`
const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
if (reuse === undefined) await admin`create database ${admin(name)}`
const url = new URL(ADMIN_URL)
url.pathname = `/${name}`
const sql = postgres(url.toString(), { max: 1, onnotice: () => {} })

async function timed(label, fn) {
  const t = performance.now()
  const out = await fn()
  say(`  ${label}: ${((performance.now() - t) / 1000).toFixed(1)} s`)
  return out
}

async function sample(fn) {
  const ms = []
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now()
    await fn(i)
    ms.push(performance.now() - t)
  }
  ms.sort((a, b) => a - b)
  return { p50: ms[Math.floor(ms.length * 0.5)], p99: ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))] }
}

const monthsMerged = async () => (await sql`
  select count(*)::int as n from pg_inherits i join pg_class c on c.oid = i.inhrelid
  where i.inhparent = 'visit_days'::regclass and visit_stats_month_of(c.relname) is not null`)[0].n
/** The first day of the month before this one */
const lastMonthStart = () => { const d = new Date(); return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1)).toISOString().slice(0, 10) }

async function generate() {
  say(`${LINKS.toLocaleString('en')} links, ${ACCOUNTS.toLocaleString('en')} accounts, ${DAYS} days of statistics for ${BUSY.toLocaleString('en')} links (database ${name})`)
  const t0 = performance.now()
  await migrate(sql, fileURLToPath(new URL('../../sql/', import.meta.url)))
  await timed('accounts', () => sql`
    insert into users (username, display_name, password_hash)
    select 'huge' || i, 'Huge ' || i, 'x' from generate_series(0, ${ACCOUNTS - 1}) i`)
  // No triggers while generating (the change feed's notifications, per row): this connection only.
  await sql`set session_replication_role = replica`
  await timed('links', () => sql`
    insert into links (code, user_id, url, location)
    select 'H' || lpad(i::text, 7, '0'), u.id, 'https://www.example.org/articles/' || i, 'https://www.example.org/articles/' || i
    from generate_series(0, ${LINKS - 1}) i
    join (select id, (row_number() over (order by username) - 1)::int as n from users) u on u.n = i % ${ACCOUNTS}`)
  await timed('partitions', async () => {
    await sql`select visit_stats_maintain(${dayOf(DAYS - 1)}::date, ${dayOf(DAYS - 1)}::date, ${dayOf(-3)}::date)`
    // The layout the daily job keeps (sql/0019): finished months merged, one a run, all but the
    // last finished month, whose merge of real rows is timed below.
    for (let merged = -1; merged < (await monthsMerged()); ) {
      merged = await monthsMerged()
      await sql`select visit_stats_maintain(${dayOf(DAYS - 1)}::date, ${lastMonthStart()}::date, ${dayOf(-3)}::date)`
    }
  })
  // A month at a time, rows in key order (code, then day): each statement appends to the end of
  // its partitions' indexes, where days one after another would insert all over a month's index.
  await timed('statistics', async () => {
    for (let lo = dayOf(DAYS - 1); lo <= dayOf(0); ) {
      const next = new Date(Date.UTC(Number(lo.slice(0, 4)), Number(lo.slice(5, 7)), 1)).toISOString().slice(0, 10)
      const last = new Date(Date.parse(next) - DAY_MS).toISOString().slice(0, 10)
      const hi = last < dayOf(0) ? last : dayOf(0)
      const days = sql`generate_series(${lo}::date, ${hi}::date, interval '1 day')`
      await sql`insert into visit_days (code, day, humans, bots, uniques)
        select 'H' || lpad(i::text, 7, '0'), d::date, 20 + i % 7, 3, 12 from generate_series(0, ${BUSY - 1}) i, lateral ${days} d`
      await sql`insert into visit_referrers (code, day, host, visits)
        select 'H' || lpad(i::text, 7, '0'), d::date, h, 10 from generate_series(0, ${BUSY - 1}) i, lateral ${days} d, unnest(array['direct', 'news.example.com']) h`
      await sql`insert into visit_dims (code, day, dim, value, visits)
        select 'H' || lpad(i::text, 7, '0'), d::date, m, 'x', 20 from generate_series(0, ${BUSY - 1}) i, lateral ${days} d, unnest(array['browser', 'country', 'device', 'os']) m`
      lo = next
    }
  })
  await sql`set session_replication_role = origin`
  await timed('vacuum analyze', () => sql`vacuum analyze`)
  say(`generated in ${((performance.now() - t0) / 60_000).toFixed(1)} min`)
}

async function measure() {
  const m0 = performance.now()
  const before = await monthsMerged()
  await runStatsJob(sql, dayOf(1), dayOf(DAYS - 1), dayOf(1), dayOf(-3))
  const mergeSeconds = (performance.now() - m0) / 1000
  const [{ n: monthRows }] = await sql`select (select count(*) from visit_days where day >= ${lastMonthStart()}::date and day < date_trunc('month', now())) + (select count(*) from visit_referrers where day >= ${lastMonthStart()}::date and day < date_trunc('month', now())) + (select count(*) from visit_dims where day >= ${lastMonthStart()}::date and day < date_trunc('month', now())) as n`
  const mergeLine = `| the daily job merging last month's days into one partition (${Number(monthRows).toLocaleString('en')} rows; ${await monthsMerged() - before} month merged) | ${mergeSeconds.toFixed(1)} s | |`
  const [{ size }] = await sql`select pg_database_size(current_database())::bigint as size`
  const users = (await sql`select id from users order by username limit 1000`).map((r) => r.id)

  const rows = []
  const row = (label, r) => rows.push(`| ${label} | ${r.p50.toFixed(2)} ms | ${r.p99.toFixed(2)} ms |`)
  row(`cold redirect's look-up, a random code of ${LINKS.toLocaleString('en')}`, await sample(() => findLocations(sql, [code(random(LINKS))])))
  const busyOwned = await sql`select code, user_id from links where code < ${code(Math.min(BUSY, 1000))} limit 1000`
  row(`one link's statistics over ${DAYS} days`, await sample((i) => { const l = busyOwned[i % busyOwned.length]; return readStats(sql, l.user_id, l.code, dayOf(DAYS - 1), dayOf(0)) }))
  row("an owner's list (50 links)", await sample(() => listLinks(sql, users[random(users.length)])))
  const [creator] = await sql`insert into users (username, display_name, password_hash) values ('creator', 'Creator', 'x') returning id`
  // Every 50 creates the account's links are deleted, outside the timing (each deletion's trigger
  // deletes the link's statistics from every day partition).
  const creates = []
  for (let i = 0; i < SAMPLES; i++) {
    if (i % 50 === 0) await sql`update links set deleted_at = now(), user_id = null, url = null, location = null where user_id = ${creator.id}`
    const t = performance.now()
    await insertLink(sql, creator.id, { url: `https://example.org/new/${i}`, location: `https://example.org/new/${i}`, host: 'example.org', expiresAt: null, startsAt: null, maxVisits: null, passwordHash: null, tags: [], rules: [], title: null, description: null, imageUrl: null }, 50, { perMinute: 100_000, youngHours: 0 })
    creates.push(performance.now() - t)
  }
  creates.sort((a, b) => a - b)
  row('a create', { p50: creates[Math.floor(SAMPLES / 2)], p99: creates[Math.min(SAMPLES - 1, Math.floor(SAMPLES * 0.99))] })
  // Cold redirects over the whole set: the service with a 1 MiB cache against the node:http
  // ceiling, alternating, 64 connections, each round walking from elsewhere in the random codes.
  const tmp = mkdtempSync(join(tmpdir(), 'bench-huge-'))
  try {
    const walkFile = join(tmp, 'walk')
    writeFileSync(walkFile, `${Array.from({ length: WALK }, () => { const i = random(LINKS); return `${code(i)}\thttps://www.example.org/articles/${i}` }).join('\n')}\n`)
    const database = { serviceEnv: { DATABASE_URL: url.toString() } }
    const cold = { service: [], ceiling: [] }
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of round % 2 ? ['ceiling', 'service'] : ['service', 'ceiling']) {
        const spec = kind === 'service' ? { kind: 'service', env: { CACHE_MAX_BYTES: String(SMALL_CACHE_BYTES), ACCESS_LOG: 'api' } } : { kind: 'ceiling', links: walkFile }
        const proc = await start(`${kind} ${round}`, spec, { tmp, database })
        cold[kind].push(await runWrk({ url: proc.url, connections: C_THROUGHPUT, seconds: SECONDS, args: ['redirect', walkFile, String(random(WALK)), String(Math.floor(WALK / 2))] }))
        await stop(proc, say)
      }
    }
    const rps = (k) => median(cold[k].map((r) => r.rps))
    const p99 = (k) => median(cold[k].map((r) => r.p99_us)) / 1000
    rows.unshift(`| cold redirect over ${LINKS.toLocaleString('en')} links (1 MiB cache, 64 connections, ${ROUNDS} rounds): ${rps('service').toFixed(0)}/s, ${(rps('service') / rps('ceiling')).toFixed(2)}× the ceiling's ${rps('ceiling').toFixed(0)}/s | p99 ${p99('service').toFixed(1)} ms (ceiling ${p99('ceiling').toFixed(1)} ms) | |`)
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  say('\n| Statement | p50 | p99 |')
  say('|---|---|---|')
  for (const r of rows) say(r)
  say(mergeLine)
  // The oldest day (in the month that is partly past retention, still in days) goes; then the
  // oldest merged month, as it does when its last day passes.
  const t = performance.now()
  const dropped = await runStatsJob(sql, dayOf(1), dayOf(DAYS - 2), dayOf(1), dayOf(-3))
  say(`| the retention job, dropping ${dropped} day (${(BUSY * 7).toLocaleString('en')} rows) | ${(performance.now() - t).toFixed(0)} ms | |`)
  const [{ first }] = await sql`
    select min(visit_stats_month_of(c.relname))::text as first from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'visit_days'::regclass`
  if (first !== null) {
    const end = new Date(Date.parse(first) + 32 * DAY_MS).toISOString().slice(0, 8) + '01'
    const tm = performance.now()
    const n = await runStatsJob(sql, dayOf(1), end, dayOf(1), dayOf(-3))
    say(`| the retention job, dropping the oldest merged month and the days before it (${n} partitions of each table) | ${(performance.now() - tm).toFixed(0)} ms | |`)
  }
  say(`| the database on disk | ${(Number(size) / 2 ** 30).toFixed(2)} GiB | |`)
}

const peakRss = () => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024

/** Everything the database holds, as `link-service export` writes it, to nowhere. */
async function exportAll() {
  const e0 = performance.now()
  let bytes = 0
  let lines = 0
  const counts = await exportDatabase(sql, { sessions: false }, async (line) => {
    bytes += line.length + 1
    // a line of progress every 10 million rows: an hour-long export says how it goes
    if (++lines % 10_000_000 === 0) say(`  export: ${lines.toLocaleString('en')} lines, ${(bytes / 2 ** 30).toFixed(2)} GiB in ${((performance.now() - e0) / 1000).toFixed(0)} s, peak RSS ${peakRss().toFixed(0)} MB`)
  })
  const hwm = peakRss()
  const exported = Object.values(counts).reduce((a, b) => a + b, 0)
  say(`| the export of everything: ${exported.toLocaleString('en')} rows, ${(bytes / 2 ** 30).toFixed(2)} GiB | ${((performance.now() - e0) / 1000).toFixed(1)} s | peak RSS of the exporting process ${hwm.toFixed(0)} MB |`)
}

try {
  if (reuse === undefined) await generate()
  if (generateOnly) say(`kept: BENCH_HUGE_DB=${name}`)
  else {
    if (process.env.BENCH_HUGE_EXPORT !== 'only') await measure()
    if (process.env.BENCH_HUGE_EXPORT !== 'off') await exportAll()
  }
} finally {
  await sql.end()
  if (process.env.BENCH_KEEP !== '1' && reuse === undefined && !generateOnly) await admin`drop database ${admin(name)} with (force)`
  await admin.end()
}
