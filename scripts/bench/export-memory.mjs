// What one person's export costs the service at the account's limits: 50 links × 400 days of
// statistics with referrers and breakdowns. A real service (server.js) serves
// GET /api/v1/users/me/export, JSON and ZIP, to a client that reads as fast as it can and to one
// that reads slowly; the serving process's peak RSS during each export (VmHWM, reset before it)
// against its RSS before, and the export's size and time.
//
//   npx tsc -p tsconfig.json && node scripts/bench/export-memory.mjs
//
// Env: BENCH_DATABASE_URL (a fresh, empty PostgreSQL database; default: the embedded database in
// a temporary directory), BENCH_LINKS (50), BENCH_DAYS (400). Prints the figures; keeps nothing.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join, resolve } from 'node:path'

const TREE = resolve('.')
const LINKS = Number(process.env.BENCH_LINKS || 50)
const DAYS = Number(process.env.BENCH_DAYS || 400)
const DATABASE_URL = process.env.BENCH_DATABASE_URL || undefined
const tmp = mkdtempSync(join(os.tmpdir(), 'export-memory-'))
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }))
const say = (line) => process.stdout.write(line + '\n')
const DATA_DIR = join(tmp, 'data')

/** A real service on a free port; resolves with its URL and the pid that serves. */
async function startService() {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', LOG_LEVEL: 'info', ACCESS_LOG: 'off', SERVE_APP: 'off', APP_URL: 'https://app.invalid', ARGON2_MEMORY_KIB: '64', ARGON2_ITERATIONS: '1', ...(DATABASE_URL === undefined ? { DATA_DIR } : { DATABASE_URL }) }
  const child = spawn(process.execPath, [join(TREE, 'build/src/server.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const url = await new Promise((done, fail) => {
    const look = (s) => {
      out += s
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out)
      if (m) done(m[1])
    }
    child.stdout.setEncoding('utf8').on('data', look)
    child.stderr.setEncoding('utf8').on('data', look)
    child.once('exit', (code) => fail(new Error(`the service exited (${code}): ${out.slice(-2000)}`)))
  })
  // The embedded engine restarts node with a flag: the process that serves is the child's child.
  const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  const pid = [child.pid, ...children].at(-1)
  const stop = async () => {
    child.kill('SIGTERM')
    await new Promise((done) => child.once('exit', done))
  }
  return { url, pid, stop }
}

const api = async (url, method, path, token, body) => {
  const res = await fetch(url + path, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body && JSON.stringify(body) })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return JSON.parse(text)
}

// 1. The account and its links, through the API.
let svc = await startService()
const username = `bench${Date.now().toString(36)}`
await api(svc.url, 'POST', '/api/v1/users', undefined, { username, password: 'bench password', display_name: 'Bench' })
const { token } = await api(svc.url, 'POST', '/api/v1/auth/login', undefined, { username, password: 'bench password' })
const codes = []
for (let i = 0; i < LINKS; i++) codes.push((await api(svc.url, 'POST', '/api/v1/links', token, { url: `https://example.com/page/${i}`, tags: ['bench', `t${i % 5}`] })).code)
await svc.stop()

// 2. Their statistics, straight into the tables (the embedded database is one process's at a time).
const { openDatabase } = await import(join(TREE, 'build/src/db/open.js'))
const db = await openDatabase(DATABASE_URL, DATA_DIR, 600_000)
const t0 = performance.now()
const VALUES = { device: ['desktop', 'mobile', 'tablet'], browser: ['Chrome', 'Firefox', 'Safari', 'Edge', 'Opera'], os: ['Windows', 'macOS', 'Linux', 'iOS', 'Android'], country: ['DE', 'US', 'FR', 'GB', 'NL', 'ES', 'IT', 'PL', 'SE', 'JP'] }
const dims = Object.entries(VALUES).flatMap(([dim, values]) => values.map((value) => [dim, value]))
await db.sql`insert into visit_days (code, day, humans, bots, uniques)
  select c, current_date - d, 100 + d % 37, d % 11, 50 + d % 13 from unnest(${codes}::text[]) c, generate_series(0, ${DAYS - 1}) d`
await db.sql`insert into visit_referrers (code, day, host, visits)
  select c, current_date - d, 'site' || r || '.example', 1 + (d + r) % 9 from unnest(${codes}::text[]) c, generate_series(0, ${DAYS - 1}) d, generate_series(1, 5) r`
await db.sql`insert into visit_dims (code, day, dim, value, visits)
  select c, current_date - d, x.dim, x.value, 1 + d % 17 from unnest(${codes}::text[]) c, generate_series(0, ${DAYS - 1}) d,
    unnest(${dims.map((x) => x[0])}::text[], ${dims.map((x) => x[1])}::text[]) as x(dim, value)`
const [{ n }] = await db.sql`select (select count(*) from visit_days) + (select count(*) from visit_referrers) + (select count(*) from visit_dims) as n`
await db.close()
say(`${LINKS} links × ${DAYS} days: ${Number(n).toLocaleString('en-US')} statistics rows written in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${DATABASE_URL === undefined ? 'embedded database' : 'PostgreSQL'}`)

// 3. The exports, each with the serving process's peak RSS reset just before it (a fresh account
// allowance: three at once, so the fourth waits its 20 s).
svc = await startService()
const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${svc.pid}/status`, 'utf8'))?.[1] ?? NaN)
const mb = (k) => `${(k / 1024).toFixed(0)} MB`
// Warm up: the first requests load code and fill pools.
await api(svc.url, 'GET', '/api/v1/users/me', token)
await new Promise((r) => setTimeout(r, 3_000))
// The first export after seeding also waits for the daily statistics job, which moves the seeded
// rows into their day and month partitions at start: reported, not what an export costs.
const cases = [
  ['first export after seeding (the statistics job runs meanwhile)', '', 0],
  ['JSON, read as fast as it comes', '', 0],
  ['ZIP, read as fast as it comes', '?format=zip', 0],
  ['JSON, read slowly (64 KiB every 20 ms)', '', 20],
]
for (const [name, query, pauseMs] of cases) {
  writeFileSync(`/proc/${svc.pid}/clear_refs`, '5') // resets VmHWM to the current RSS
  const before = kb('VmRSS')
  let started = performance.now()
  let res = await fetch(`${svc.url}/api/v1/users/me/export${query}`, { headers: { authorization: `Bearer ${token}` } })
  if (res.status === 429) {
    await res.text()
    await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after')) * 1000))
    writeFileSync(`/proc/${svc.pid}/clear_refs`, '5')
    started = performance.now()
    res = await fetch(`${svc.url}/api/v1/users/me/export${query}`, { headers: { authorization: `Bearer ${token}` } })
  }
  if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`)
  let bytes = 0
  const reader = res.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    bytes += value.length
    if (pauseMs > 0 && bytes % 65_536 < value.length) await new Promise((r) => setTimeout(r, pauseMs))
  }
  const seconds = (performance.now() - started) / 1000
  say(`${name}: ${(bytes / 1e6).toFixed(1)} MB in ${seconds.toFixed(1)} s; service RSS before ${mb(before)}, peak during ${mb(kb('VmHWM'))} (+${mb(kb('VmHWM') - before)})`)
}
await svc.stop()
