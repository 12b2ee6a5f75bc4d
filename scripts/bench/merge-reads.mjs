// Statistics reads during a month's merge by the daily job. Each run creates a fresh PostgreSQL
// database, starts the service once to migrate it, and, with the service stopped, fills the days of
// the month before last with `links` codes × its days × 7 rows (1 day row, 3 referrer hosts, 3
// breakdown values), each day in its own partition, as flushes would have left them; 20 of the codes
// are real links of one account. It then starts the service again, whose job merges that month on
// its first run (5 s after start), and has 8 clients read the real links' statistics from
// "listening" until 2 s after the month's partition appears. Prints each run's longest read, its
// answers by status and how long the merge took, then the medians.
// Needs a build (npm run build, or the test build: BENCH_SERVER=build/src/server.js) and
// PostgreSQL at BENCH_ADMIN_URL (default: the local server).
//   node scripts/bench/merge-reads.mjs [runs, 3] [links, 4000]
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { api, median, ROOT, sleep, startLogged, stopChild } from './lib.mjs'

const RUNS = Number(process.argv[2] ?? 3)
const LINKS = Number(process.argv[3] ?? 4000)
const REAL = 20
const CLIENTS = 8
const SERVER = process.env.BENCH_SERVER ?? 'dist/server.js'
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const say = (line) => process.stdout.write(`${line}\n`)

/** The first day of the month before last, and its days. */
function monthBeforeLast() {
  const now = new Date()
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1))
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1))
  const days = []
  for (let d = first; d < next; d = new Date(d.getTime() + 86_400_000)) days.push(d.toISOString().slice(0, 10))
  return { first: days[0], days, tag: days[0].slice(0, 7).replace('-', '') }
}

async function oneRun(tmp, run) {
  const name = `bench_merge_${randomBytes(4).toString('hex')}`
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
  await admin`create database ${admin(name)}`
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  const env = { ...process.env, DATABASE_URL: url.toString(), PORT: '0', LOG_LEVEL: 'info', ACCESS_LOG: 'off', LINK_CREATE_PER_MINUTE: '100000', LINK_CREATE_BURST: '100000', ARGON2_MEMORY_KIB: '64', ARGON2_ITERATIONS: '1', TRUST_PROXY: '127.0.0.1' }
  const db = postgres(url.toString(), { max: 1, onnotice: () => {} })
  let child
  try {
    // 1. Migrated, with one account and its links.
    let started = await startLogged('service', process.execPath, [SERVER], { logFile: join(tmp, `run${run}a.log`), env })
    child = started.child
    let base = started.listening.url ?? `http://127.0.0.1:${started.listening.port}`
    const username = `merge${randomBytes(3).toString('hex')}`
    await api(base, 'POST', '/api/v1/users', { body: { username, password: 'correct horse', display_name: 'Merge' } })
    const token = (await api(base, 'POST', '/api/v1/auth/login', { body: { username, password: 'correct horse' } })).body.token
    const codes = []
    for (let i = 0; i < REAL; i++) codes.push((await api(base, 'POST', '/api/v1/links', { token, body: { url: `https://example.com/${i}` } })).body.code)
    await stopChild(child, 5_000)
    child = undefined
    // 2. The month before last, as flushes leave it: a partition a day, rows in them.
    const { days, tag } = monthBeforeLast()
    for (const t of ['visit_days', 'visit_referrers', 'visit_dims']) for (const d of days) await db`select visit_stats_partition(${t}, ${d}::date)`
    const all = [...codes, ...Array.from({ length: LINKS - REAL }, (_, i) => `bench${String(i).padStart(7, '0')}`)]
    await db`insert into visit_days (code, day, humans, bots) select c, d::date, 5, 1 from unnest(${all}::text[]) c, unnest(${days}::text[]) d`
    await db`insert into visit_referrers (code, day, host, visits) select c, d::date, h, 2 from unnest(${all}::text[]) c, unnest(${days}::text[]) d, unnest(array['direct', 'news.example', 'other']) h`
    await db`insert into visit_dims (code, day, dim, value, visits) select c, d::date, 'os', v, 2 from unnest(${all}::text[]) c, unnest(${days}::text[]) d, unnest(array['Linux', 'iOS', 'Android']) v`
    await db`vacuum analyze visit_days, visit_referrers, visit_dims`
    const rows = all.length * days.length * 7
    // 3. The service again: its job merges the month 5 s after start, while 8 clients read.
    started = await startLogged('service', process.execPath, [SERVER], { logFile: join(tmp, `run${run}b.log`), env })
    child = started.child
    const listeningAt = performance.now()
    base = started.listening.url ?? `http://127.0.0.1:${started.listening.port}`
    let mergedAt
    const watch = (async () => {
      while (mergedAt === undefined && performance.now() - listeningAt < 300_000) {
        const [{ found }] = await db`select to_regclass(${`visit_days_${tag}`}) is not null as found`
        if (found) mergedAt = performance.now()
        else await sleep(100)
      }
    })()
    const statuses = new Map()
    let longest = 0
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (mergedAt === undefined || performance.now() < mergedAt + 2_000) {
          const t0 = performance.now()
          const res = await api(base, 'GET', `/api/v1/links/${codes[Math.floor(Math.random() * codes.length)]}/stats`, { token })
          longest = Math.max(longest, performance.now() - t0)
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
          if (performance.now() - listeningAt > 300_000) break
        }
      }),
    )
    await watch
    return { rows, statuses, longest, mergedAfter: mergedAt === undefined ? NaN : (mergedAt - listeningAt) / 1000 }
  } finally {
    if (child !== undefined) await stopChild(child, 5_000)
    await db.end({ timeout: 1 })
    await admin`drop database if exists ${admin(name)} with (force)`
    await admin.end({ timeout: 1 })
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'bench-merge-'))
const longest = []
const merged = []
try {
  for (let run = 1; run <= RUNS; run++) {
    const r = await oneRun(tmp, run)
    longest.push(r.longest)
    merged.push(r.mergedAfter)
    const shown = [...r.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')
    say(`run ${run}: ${r.rows} rows in the month; longest read ${Math.round(r.longest)} ms; reads ${shown}; month merged ${r.mergedAfter.toFixed(1)} s after listening`)
  }
  say(`median of ${RUNS} runs (${CLIENTS} clients, ${LINKS} links, from ${SERVER.startsWith('/') ? SERVER : `${ROOT}/${SERVER}`}): longest read ${Math.round(median(longest))} ms, month merged ${median(merged).toFixed(1)} s after listening`)
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
