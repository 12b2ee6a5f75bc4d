// A data set of record size, generated inside PostgreSQL (generate_series, no API): LINKS links
// across ACCOUNTS accounts, and DAYS days of statistics (a day row, 2 referrer rows and 4
// breakdown rows a day) for the BUSY busiest links, in the partitions of sql/0016 and sql/0019.
// Then the statements the service runs, timed on it (p50 and p99 over SAMPLES runs each): a cold
// redirect through the service against the node:http ceiling of the same rounds, its look-up, one
// link's statistics over all the days, an owner's list and a create (each against a set a tenth
// the size, made alongside and timed in alternating blocks), the daily job's month merge, the
// retention job, the export of everything (time, and this process's peak RSS), and the database's
// size on disk; and where the time goes in the reads (EXPLAIN ANALYZE with buffers and I/O timing).
// A whole run at the issue's scale writes its section of docs/performance.md.
// Needs dist/ (npm run build) and PostgreSQL at BENCH_ADMIN_URL (default: the local server).
// The issue's scale is the default; a smaller one proves the script (printed, not written):
//   BENCH_HUGE=1 node scripts/bench/huge.mjs
//   BENCH_HUGE_LINKS=1000000 BENCH_HUGE_ACCOUNTS=20000 BENCH_HUGE_BUSY=1000 node scripts/bench/huge.mjs
// Generating the full set takes the better part of an hour: BENCH_KEEP=1 keeps the database, and
// BENCH_HUGE_DB=<its name> times the statements on it again without generating (same scale variables);
// BENCH_HUGE_GENERATE_ONLY=1 generates, keeps and stops; BENCH_HUGE_EXPORT=off skips the export
// (the better part of an hour at full scale), =only runs it alone: with BENCH_HUGE_MEASURED=<the
// file a measuring run saved> it completes that run and writes the section (=saved: from the file).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { exportDatabase } from '../../dist/admin/export.js'
import { migrate } from '../../dist/db/migrate.js'
import { findLocations, insertLink, listLinks } from '../../dist/links/queries.js'
import { readStats, runStatsJob } from '../../dist/stats/queries.js'
import { median, ROOT, runWrk, treeMemory } from './lib.mjs'
import { C_THROUGHPUT, SMALL_CACHE_BYTES } from './options.mjs'
import { start, stop } from './processes.mjs'
import { commandLine, commit, machine, withRecordSize } from './report.mjs'

const int = (name, fallback) => Number(process.env[name] ?? fallback)
const LINKS = int('BENCH_HUGE_LINKS', 10_000_000)
const ACCOUNTS = int('BENCH_HUGE_ACCOUNTS', 200_000)
const BUSY = int('BENCH_HUGE_BUSY', 100_000)
const DAYS = int('BENCH_HUGE_DAYS', 400)
const SAMPLES = int('BENCH_HUGE_SAMPLES', 200)
const ROUNDS = int('BENCH_ROUNDS', 3)
const SECONDS = int('BENCH_SECONDS', 10)
/** The issue's scale: only a run at it writes docs/performance.md */
const ISSUE_SCALE = LINKS === 10_000_000 && ACCOUNTS === 200_000 && BUSY === 100_000 && DAYS === 400
/** The set list and create are compared with: a tenth of the links and accounts (50 links an owner in both) */
const BASE = { links: Math.round(LINKS / 10), accounts: Math.round(ACCOUNTS / 10) }
/** Codes the cold redirects walk: random ones of the whole set, far more than the cache holds. */
const WALK = Math.min(LINKS, 1_000_000)
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const DAY_MS = 86_400_000
const say = (line) => process.stdout.write(`${line}\n`)
const code = (i) => `H${String(i).padStart(7, '0')}`
const dayOf = (offset) => new Date(Date.now() - offset * DAY_MS).toISOString().slice(0, 10)
const random = (n) => Math.floor(Math.random() * n)
const n = (x) => Number(x).toLocaleString('en')
const ms = (x) => `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms`

const reuse = process.env.BENCH_HUGE_DB
const generateOnly = process.env.BENCH_HUGE_GENERATE_ONLY === '1'
const exportMode = process.env.BENCH_HUGE_EXPORT ?? 'on'
const name = reuse ?? `bench_huge_${randomBytes(4).toString('hex')}`
const baseName = `${name}_base`
const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
const urlOf = (db) => { const u = new URL(ADMIN_URL); u.pathname = `/${db}`; return u.toString() }
if (reuse === undefined) await admin`create database ${admin(name)}`
const url = urlOf(name)
const sql = postgres(url, { max: 1, onnotice: () => {} })
const started = new Date()
const load0 = (await import('node:os')).loadavg()

async function timed(label, fn) {
  const t = performance.now()
  const out = await fn()
  const seconds = (performance.now() - t) / 1000
  say(`  ${label}: ${seconds.toFixed(1)} s`)
  // kept in the set, so that a later run on it can say how it was made
  await sql`insert into bench_huge_generation (step, seconds) values (${label}, ${seconds})
            on conflict (step) do update set seconds = excluded.seconds`.catch(() => {})
  return out
}

const quantiles = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return { p50: s[Math.floor(s.length * 0.5)], p99: s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] }
}

async function sample(fn) {
  const times = []
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now()
    await fn(i)
    times.push(performance.now() - t)
  }
  return quantiles(times)
}

const monthsMerged = async () => (await sql`
  select count(*)::int as n from pg_inherits i join pg_class c on c.oid = i.inhrelid
  where i.inhparent = 'visit_days'::regclass and visit_stats_month_of(c.relname) is not null`)[0].n
/** The first day of the month before this one */
const lastMonthStart = () => { const d = new Date(); return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1)).toISOString().slice(0, 10) }

/** Accounts and links only (no statistics), `links / accounts` links an account, codes H0000000 up. */
async function accountsAndLinks(db, links, accounts, step = async (_, fn) => fn()) {
  await migrate(db, fileURLToPath(new URL('../../sql/', import.meta.url)))
  await step('accounts', () => db`
    insert into users (username, display_name, password_hash)
    select 'huge' || i, 'Huge ' || i, 'x' from generate_series(0, ${accounts - 1}) i`)
  // No triggers while generating (the change feed's notifications, per row): this connection only.
  await db`set session_replication_role = replica`
  await step('links', () => db`
    insert into links (code, user_id, url, location)
    select 'H' || lpad(i::text, 7, '0'), u.id, 'https://www.example.org/articles/' || i, 'https://www.example.org/articles/' || i
    from generate_series(0, ${links - 1}) i
    join (select id, (row_number() over (order by username) - 1)::int as n from users) u on u.n = i % ${accounts}`)
  await db`set session_replication_role = origin`
}

async function generate() {
  say(`${n(LINKS)} links, ${n(ACCOUNTS)} accounts, ${DAYS} days of statistics for ${n(BUSY)} links (database ${name})`)
  const t0 = performance.now()
  await sql`create table bench_huge_generation (step text primary key, seconds real not null, at timestamptz not null default clock_timestamp())`
  await accountsAndLinks(sql, LINKS, ACCOUNTS, timed)
  await sql`set session_replication_role = replica`
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
  await sql`insert into bench_huge_generation (step, seconds) values ('whole generation', ${(performance.now() - t0) / 1000})`
  say(`generated in ${((performance.now() - t0) / 60_000).toFixed(1)} min`)
}

/** EXPLAIN ANALYZE with buffers and I/O timing: where a statement's time went. */
async function explain(db, query) {
  await db`set track_io_timing = on`
  const [row] = await query
  const plan = row['QUERY PLAN'][0]
  return {
    ms: plan['Execution Time'] + plan['Planning Time'],
    ioMs: plan.Plan['I/O Read Time'] ?? 0,
    read: plan.Plan['Shared Read Blocks'] ?? 0,
    hit: plan.Plan['Shared Hit Blocks'] ?? 0,
  }
}

const average = (xs, k) => xs.reduce((a, x) => a + x[k], 0) / xs.length

/**
 * `fn(db, which)` timed on the big set and on the base set, in alternating blocks of a quarter of
 * SAMPLES each, so that a drift of the machine favours neither; `untimed(db, which)` runs before
 * each, outside the timing.
 */
async function compared(base, fn, untimed = async () => {}) {
  const times = { big: [], base: [] }
  const quarter = Math.max(1, Math.floor(SAMPLES / 4))
  for (let block = 0; block < 4; block++) {
    for (const which of block % 2 ? ['base', 'big'] : ['big', 'base']) {
      const db = which === 'big' ? sql : base
      for (let i = 0; i < quarter; i++) {
        await untimed(db, which)
        const t = performance.now()
        await fn(db, which)
        times[which].push(performance.now() - t)
      }
    }
  }
  return { big: quantiles(times.big), base: quantiles(times.base) }
}

/** The base set: accounts and links only, a tenth of the big set's, made for this run. */
async function makeBase() {
  await admin`drop database if exists ${admin(baseName)} with (force)`
  await admin`create database ${admin(baseName)}`
  const base = postgres(urlOf(baseName), { max: 1, onnotice: () => {} })
  const t = performance.now()
  await accountsAndLinks(base, BASE.links, BASE.accounts)
  await base`vacuum analyze`
  say(`  the base set (${n(BASE.links)} links, ${n(BASE.accounts)} accounts): ${((performance.now() - t) / 1000).toFixed(1)} s`)
  return base
}

const createOf = (i) => ({ url: `https://example.org/new/${i}`, location: `https://example.org/new/${i}`, host: 'example.org', expiresAt: null, startsAt: null, maxVisits: null, passwordHash: null, tags: [], rules: [], title: null, description: null, imageUrl: null })

async function measure() {
  const r = {}
  const m0 = performance.now()
  const before = await monthsMerged()
  await runStatsJob(sql, dayOf(1), dayOf(DAYS - 1), dayOf(1), dayOf(-3))
  r.merge = { seconds: (performance.now() - m0) / 1000, months: (await monthsMerged()) - before }
  const [{ n: monthRows }] = await sql`select (select count(*) from visit_days where day >= ${lastMonthStart()}::date and day < date_trunc('month', now())) + (select count(*) from visit_referrers where day >= ${lastMonthStart()}::date and day < date_trunc('month', now())) + (select count(*) from visit_dims where day >= ${lastMonthStart()}::date and day < date_trunc('month', now())) as n`
  r.merge.rows = Number(monthRows)
  r.size = Number((await sql`select pg_database_size(current_database())::bigint as size`)[0].size)
  r.partitions = (await sql`select count(*)::int as n from pg_inherits where inhparent = 'visit_days'::regclass`)[0].n

  r.lookup = await sample(() => findLocations(sql, [code(random(LINKS))]))
  // Where a look-up's time goes: pages read from disk (not in shared buffers) and the time reading them.
  const lookups = []
  for (let i = 0; i < 50; i++) lookups.push(await explain(sql, sql`explain (analyze, buffers, format json) select code, location from links where code = ${code(random(LINKS))}`))
  r.lookupProfile = { ms: average(lookups, 'ms'), ioMs: average(lookups, 'ioMs'), read: average(lookups, 'read'), hit: average(lookups, 'hit') }

  const busyOwned = await sql`select code, user_id from links where code < ${code(Math.min(BUSY, 1000))} limit 1000`
  r.stats = await sample((i) => { const l = busyOwned[i % busyOwned.length]; return readStats(sql, l.user_id, l.code, dayOf(DAYS - 1), dayOf(0)) })
  // One busy link never read before, read twice: from disk, then from memory.
  const [fresh] = await sql`select code, user_id from links where code = ${code(Math.min(BUSY, 1000) + random(Math.max(1, BUSY - 1000)))}`
  const statsOnce = () => explain(sql, sql`explain (analyze, buffers, format json) select * from link_stats(${fresh.user_id}, ${fresh.code}, ${dayOf(DAYS - 1)}::date, ${dayOf(0)}::date)`)
  r.statsProfile = { cold: await statsOnce(), warm: await statsOnce() }

  const base = await makeBase()
  try {
    // The owners timed: 1,000, or half of a small set's, so that others remain for the profile below.
    const ownersTimed = (accounts) => Math.min(1000, Math.floor(accounts / 2))
    const owners = {
      big: (await sql`select id from users order by username limit ${ownersTimed(ACCOUNTS)}`).map((u) => u.id),
      base: (await base`select id from users order by username limit ${ownersTimed(BASE.accounts)}`).map((u) => u.id),
    }
    r.list = await compared(base, (db, which) => listLinks(db, owners[which][random(owners[which].length)]))
    // Where a list's time goes, on each set: 20 owners not among those sampled.
    r.listProfile = {}
    for (const [which, db] of [['big', sql], ['base', base]]) {
      const others = await db`select id from users where username like 'huge%' and id <> all(${owners[which]}::uuid[]) order by random() limit 20`
      const plans = []
      for (const { id } of others) plans.push(await explain(db, db`explain (analyze, buffers, format json) select * from live_links where user_id = ${id} order by id desc`))
      r.listProfile[which] = { ms: average(plans, 'ms'), ioMs: average(plans, 'ioMs'), read: average(plans, 'read'), hit: average(plans, 'hit') }
    }
    // Every 50 creates an account's links are deleted, outside the timing (the 50-link cap; each
    // deletion's trigger deletes the link's statistics from every partition).
    const creators = {}
    for (const [which, db] of [['big', sql], ['base', base]]) {
      creators[which] = { id: (await db`insert into users (username, display_name, password_hash) values (${`creator_${randomBytes(4).toString('hex')}`}, 'Creator', 'x') returning id`)[0].id, made: 0 }
    }
    r.create = await compared(
      base,
      (db, which) => insertLink(db, creators[which].id, createOf(creators[which].made), 50, { perMinute: 100_000, youngHours: 0 }),
      async (db, which) => {
        if (creators[which].made++ % 50 === 0) await db`update links set deleted_at = now(), user_id = null, url = null, location = null where user_id = ${creators[which].id}`
      },
    )
  } finally {
    await base.end()
  }

  // Cold redirects: the service with a 1 MiB cache over the big set and over the base set, and the
  // node:http ceiling, in turn each round (the order rotating), 64 connections, each round walking
  // from elsewhere in the random codes.
  const tmp = mkdtempSync(join(tmpdir(), 'bench-huge-'))
  try {
    const walks = {}
    for (const [kind, links] of [['big', LINKS], ['base', BASE.links]]) {
      walks[kind] = join(tmp, `walk-${kind}`)
      writeFileSync(walks[kind], `${Array.from({ length: WALK }, () => { const i = random(links); return `${code(i)}\thttps://www.example.org/articles/${i}` }).join('\n')}\n`)
    }
    const arms = ['big', 'base', 'ceiling']
    const cold = { big: [], base: [], ceiling: [] }
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < arms.length; k++) {
        const kind = arms[(k + round) % arms.length]
        const spec = kind === 'ceiling'
          ? { kind: 'ceiling', links: walks.big }
          : { kind: 'service', env: { CACHE_MAX_BYTES: String(SMALL_CACHE_BYTES), ACCESS_LOG: 'api' } }
        const database = { serviceEnv: { DATABASE_URL: urlOf(kind === 'base' ? baseName : name) } }
        const proc = await start(`${kind} ${round}`, spec, { tmp, database })
        const walk = kind === 'base' ? walks.base : walks.big
        cold[kind].push(await runWrk({ url: proc.url, connections: C_THROUGHPUT, seconds: SECONDS, args: ['redirect', walk, String(random(WALK)), String(Math.floor(WALK / 2))] }))
        await stop(proc, say)
      }
    }
    const rps = (k) => median(cold[k].map((w) => w.rps))
    const p99 = (k) => median(cold[k].map((w) => w.p99_us)) / 1000
    const ratios = (k) => cold[k].map((w, i) => w.rps / cold.ceiling[i].rps)
    r.cold = Object.fromEntries(arms.map((k) => [k, { rps: rps(k), p99: p99(k), ratios: k === 'ceiling' ? [] : ratios(k) }]))
  } finally {
    rmSync(tmp, { recursive: true, force: true })
    await admin`drop database if exists ${admin(baseName)} with (force)`
  }

  // The oldest day (in the month that is partly past retention, still in days) goes; then the
  // oldest merged month, as it does when its last day passes.
  const t = performance.now()
  const dropped = await runStatsJob(sql, dayOf(1), dayOf(DAYS - 2), dayOf(1), dayOf(-3))
  r.dropDay = { ms: performance.now() - t, days: dropped }
  const [{ first }] = await sql`
    select min(visit_stats_month_of(c.relname))::text as first from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'visit_days'::regclass`
  if (first !== null) {
    const end = new Date(Date.parse(first) + 32 * DAY_MS).toISOString().slice(0, 8) + '01'
    const tm = performance.now()
    const partitions = await runStatsJob(sql, dayOf(1), end, dayOf(1), dayOf(-3))
    r.dropMonth = { ms: performance.now() - tm, partitions }
  }
  return r
}

/** This process's peak RSS (VmHWM), in MB */
const peakRss = () => treeMemory(process.pid).hwm / 2 ** 20

/** Everything the database holds, as `link-service export` writes it, to nowhere. */
async function exportAll() {
  // The peak from here on is the export's own (Linux: "5" resets VmHWM; the walks above held more).
  try {
    writeFileSync('/proc/self/clear_refs', '5')
  } catch {}
  const e0 = performance.now()
  let bytes = 0
  let lines = 0
  const counts = await exportDatabase(sql, { sessions: false }, async (line) => {
    bytes += line.length + 1
    // a line of progress every 10 million rows: an hour-long export says how it goes
    if (++lines % 10_000_000 === 0) say(`  export: ${n(lines)} lines, ${(bytes / 2 ** 30).toFixed(2)} GiB in ${((performance.now() - e0) / 1000).toFixed(0)} s, peak RSS ${peakRss().toFixed(0)} MB`)
  })
  return { seconds: (performance.now() - e0) / 1000, rows: Object.values(counts).reduce((a, b) => a + b, 0), bytes, rssMb: peakRss() }
}

const verdict = (ok) => (ok ? 'met' : '**missed**')
const script = (command) => command.replace(/scripts\/bench\.sh$/, 'node scripts/bench/huge.mjs')

/** The section of docs/performance.md, from a measuring run's saved results and its export: every row, its target and, where one is missed, where the time goes. */
function render(measured, generation) {
  const { r, exported } = measured
  const { e } = exported
  const m = measured.settings ?? { rounds: ROUNDS, seconds: SECONDS, samples: SAMPLES }
  const c = r.cold
  const coldRatio = c.big.rps / c.ceiling.rps
  const ratioRange = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`
  const within = (x) => x.big.p50 / x.base.p50
  const gen = generation.length ? generation.map((g) => `${g.step} ${g.seconds >= 120 ? `${(g.seconds / 60).toFixed(0)} min` : `${g.seconds.toFixed(0)} s`}`).join(', ') : 'not recorded'
  const rows = [
    [`cold redirect over ${n(LINKS)} links through the service (1 MiB cache, ${C_THROUGHPUT} connections): ${n(Math.round(c.big.rps))}/s against the node:http ceiling's ${n(Math.round(c.ceiling.rps))}/s in the same rounds`, `**${coldRatio.toFixed(2)}×** (${ratioRange(c.big.ratios)})`, `p99 ${ms(c.big.p99)} (ceiling ${ms(c.ceiling.p99)})`, '≥ 0.40×, p99 < 20 ms', verdict(coldRatio >= 0.4 && c.big.p99 < 20)],
    [`the same over the base set (${n(BASE.links)} links)`, `${(c.base.rps / c.ceiling.rps).toFixed(2)}× (${ratioRange(c.base.ratios)})`, `p99 ${ms(c.base.p99)}`, '', ''],
    [`its statement: a random code's look-up of ${n(LINKS)}`, `p50 ${ms(r.lookup.p50)}`, `p99 ${ms(r.lookup.p99)}`, '', ''],
    [`one link's statistics over ${DAYS} days (${r.partitions} partitions a table), ${m.samples} reads of 1,000 links`, `p50 ${ms(r.stats.p50)}`, `p99 ${ms(r.stats.p99)}`, 'p99 < 20 ms', verdict(r.stats.p99 < 20)],
    [`an owner's list (50 links), against the base set's`, `p50 ${ms(r.list.big.p50)} (base ${ms(r.list.base.p50)}): ${within(r.list).toFixed(2)}×`, `p99 ${ms(r.list.big.p99)} (base ${ms(r.list.base.p99)})`, 'within 10%', verdict(within(r.list) <= 1.1)],
    [`a create, against the base set's`, `p50 ${ms(r.create.big.p50)} (base ${ms(r.create.base.p50)}): ${within(r.create).toFixed(2)}×`, `p99 ${ms(r.create.big.p99)} (base ${ms(r.create.base.p99)})`, 'within 10%', verdict(within(r.create) <= 1.1)],
    [`the daily job merging last month's days into one partition (${n(r.merge.rows)} rows, ${r.merge.months} month)`, `${r.merge.seconds.toFixed(1)} s`, '', 'once a month, off the request path', ''],
    [`the retention job dropping ${r.dropDay.days} day (${n(BUSY * 7)} rows)`, `${r.dropDay.ms.toFixed(0)} ms`, '', '< 1 s', verdict(r.dropDay.ms < 1000)],
    ...(r.dropMonth ? [[`the retention job dropping a merged month and the days before it (${r.dropMonth.partitions} partitions of each table)`, `${(r.dropMonth.ms / 1000).toFixed(1)} s`, '', 'once a month', '']] : []),
    [`the export of everything: ${n(e.rows)} rows, ${(e.bytes / 2 ** 30).toFixed(1)} GiB`, `${(e.seconds / 60).toFixed(1)} min (${n(Math.round(e.rows / e.seconds))} rows/s)`, `peak RSS ${e.rssMb.toFixed(0)} MB`, '', ''],
    ['the database on disk (before the retention rows above)', `${(r.size / 2 ** 30).toFixed(1)} GiB`, '', '', ''],
  ]
  const lp = r.lookupProfile
  const sp = r.statsProfile
  const why = []
  if (!(coldRatio >= 0.4 && c.big.p99 < 20)) {
    const baseRatio = c.base.rps / c.ceiling.rps
    const memory = lp.read >= 0.5
      ? `reads ${lp.read.toFixed(1)} pages from outside shared buffers (the page cache or the disk) on average (EXPLAIN ANALYZE with buffers of 50 random codes: ${ms(lp.ms)} a statement, ${ms(lp.ioMs)} of it reading): the index and rows of ${n(LINKS)} links do not stay in 128 MB of shared buffers`
      : `finds its pages in memory (EXPLAIN ANALYZE with buffers of 50 random codes: ${lp.read.toFixed(1)} pages from disk on average, ${ms(lp.ms)} a statement)`
    why.push(`- **Cold redirect** (target ≥ 0.40×, p99 < 20 ms). The same walk over the base set ran at ${baseRatio.toFixed(2)}× in the same rounds: going from ${n(BASE.links)} to ${n(LINKS)} links costs ${(100 * (1 - c.big.rps / c.base.rps)).toFixed(0)}% of the rate, and the rest of the gap to the ceiling is each miss's work (docs/profile.md, "cold redirect": the service's CPU per cold redirect several times the ceiling's, PostgreSQL's as much again, on the cores wrk uses). At this size a look-up ${memory}. ${c.ceiling.p99 >= 20 ? `The ceiling's own p99 (${ms(c.ceiling.p99)}) is wrk's and the machine's at ${C_THROUGHPUT} connections: the p99 target cannot be told apart from it here.` : `The p99 (${ms(c.big.p99)}, ${ms(c.base.p99)} on the base set, the ceiling's ${ms(c.ceiling.p99)}) is the misses waiting: a cold walk makes every flush thousands of distinct links, built and written while the misses' reads queue for the pool (the 1M set's "cold redirect p99" above).`} More memory for PostgreSQL (shared_buffers, the page cache) and a larger CACHE_MAX_BYTES are the operator's levers.`)
  }
  if (!(r.stats.p99 < 20)) {
    why.push(`- **A link's statistics over ${DAYS} days** (target p99 < 20 ms). EXPLAIN ANALYZE with buffers of one busy link never read before: ${ms(sp.cold.ms)}, ${n(sp.cold.read)} pages read from disk in ${ms(sp.cold.ioMs)}; the same read again: ${ms(sp.warm.ms)}, ${n(sp.warm.read)} from disk, ${n(sp.warm.hit)} from memory. The p50 is the warm read (the rows, about ${n(DAYS * 7)} of them, built into the answer); the p99 over many links is the disk. A primary whose memory holds the statistics asked for answers in the p50's time; a per-link rollup would not shorten it, since the answer is per day.`)
  }
  const pages = (x) => `${ms(x.ms)} a statement, ${x.read.toFixed(1)} pages read from outside shared buffers (${ms(x.ioMs)} of it reading), ${x.hit.toFixed(1)} found in them`
  const lists = r.listProfile
  if (within(r.list) > 1.1) {
    why.push(`- **An owner's list** (target within 10% of the base set's): the statement and the driver's 50 rows are the same on both sets; what differs is where the pages are. ${lists ? `EXPLAIN ANALYZE with buffers of 20 owners not read before: on this set ${pages(lists.big)}; on the base set ${pages(lists.base)}.` : `(The cold redirect's look-up above reads ${lp.read.toFixed(1)} pages from outside shared buffers on average.)`} An owner's links lie on a few pages of a table ten times the size of shared buffers, so a list of an owner not seen lately reads them from the page cache or the disk; on the base set they stay in memory.`)
  }
  if (within(r.create) > 1.1) {
    why.push(`- **A create** (target within 10% of the base set's): the same statement on the base set, in alternating blocks, took ${ms(r.create.base.p50)} at p50; an insert into the primary key of ${n(LINKS)} codes touches index pages that are not in memory (the look-up above reads ${lp.read.toFixed(1)} pages from outside shared buffers on average).`)
  }
  return `## The record-size set

Written by \`BENCH_HUGE=1 npm run bench\` (scripts/bench/huge.mjs) at its own pace: generating the set
and exporting it take tens of minutes each, so it is not part of the run above.

- **Command:** \`${script(measured.command)}\`${exported.command === measured.command ? '' : `, then \`${script(exported.command)}\``}${reuse ? ' on a set generated earlier (`BENCH_HUGE_DB`)' : ''}
- **Date:** ${exported.command === measured.command ? `${measured.at} – ${exported.end}; service at commit ${measured.commit}` : `measured ${measured.at} (commit ${measured.commit}), exported ${exported.at} – ${exported.end} (commit ${exported.commit})`}
- **Set:** ${n(LINKS)} links across ${n(ACCOUNTS)} accounts (50 an account), ${DAYS} days of statistics for the ${n(BUSY)} busiest
  (${n(BUSY * DAYS)} day rows and ${n(BUSY * DAYS * 6)} referrer and breakdown rows), generated inside PostgreSQL (${gen}),
  laid out as the daily job keeps it: finished months merged into one partition each, the current and last month in days.
  The base set, made alongside for the comparisons: ${n(BASE.links)} links across ${n(BASE.accounts)} accounts.
- **Database:** PostgreSQL with its default settings (128 MB of shared buffers), on the same machine
- **Machine:** ${(({ cores, cpu, memory, kernel, load }) => `${cores} cores (${cpu}), ${memory} memory, ${kernel}; load average ${load}`)(measured.machine ?? machine(load0))}

| Figure | Median / p50 | p99 | Target | Verdict |
| --- | --- | --- | --- | --- |
${rows.map((row) => `| ${row.join(' | ')} |`).join('\n')}

The statements are the service's own (dist/), each timed ${m.samples} times from one connection; the cold
redirect is ${m.rounds} rounds of ${m.seconds} s, each arm (the service on each set, the ceiling) once a round.
docs/scale.md says what these figures mean for one primary.
${why.length ? `\nWhere the time goes in the targets missed:\n\n${why.join('\n\n')}\n` : '\nEvery target was met in this run.\n'}`
}

try {
  if (reuse === undefined) await generate()
  if (generateOnly) say(`kept: BENCH_HUGE_DB=${name}`)
  else {
    // The results go to a file (printed), so that a run may complete another of the same set:
    // BENCH_HUGE_MEASURED names it; with it, =only exports and writes the section, and =saved
    // writes the section from the file alone.
    let file = process.env.BENCH_HUGE_MEASURED
    let measured = file === undefined ? undefined : JSON.parse(readFileSync(file, 'utf8'))
    if (exportMode !== 'only' && exportMode !== 'saved') {
      measured = { at: started.toISOString(), commit: commit(), command: commandLine(), settings: { rounds: ROUNDS, seconds: SECONDS, samples: SAMPLES }, r: await measure(), machine: machine(load0) }
      file = join(tmpdir(), `bench-huge-${name}-measured.json`)
      writeFileSync(file, JSON.stringify(measured, null, 1))
      say(`${JSON.stringify(measured.r, null, 1)}\nsaved: BENCH_HUGE_MEASURED=${file}`)
    }
    if (exportMode !== 'off' && exportMode !== 'saved') {
      const e = await exportAll()
      say(`export: ${n(e.rows)} rows, ${(e.bytes / 2 ** 30).toFixed(2)} GiB in ${e.seconds.toFixed(1)} s, peak RSS ${e.rssMb.toFixed(0)} MB`)
      const exported = { at: started.toISOString(), end: new Date().toISOString(), commit: commit(), command: commandLine(), e }
      if (measured !== undefined) {
        measured.exported = exported
        writeFileSync(file, JSON.stringify(measured, null, 1))
      }
    }
    if (measured?.r !== undefined && measured.exported !== undefined) {
      const generation = await sql`select step, seconds from bench_huge_generation order by at`.catch(() => [])
      const section = render(measured, generation)
      say(`\n${section}`)
      if (ISSUE_SCALE) {
        const file = join(ROOT, 'docs', 'performance.md')
        writeFileSync(file, withRecordSize(readFileSync(file, 'utf8'), section))
        say('wrote its section of docs/performance.md')
      } else say('(not the issue\'s scale: docs/performance.md left as it was)')
    }
  }
} finally {
  await sql.end()
  if (process.env.BENCH_KEEP !== '1' && reuse === undefined && !generateOnly) await admin`drop database ${admin(name)} with (force)`
  await admin.end()
}
