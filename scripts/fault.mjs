// Fault drill: drives writes and redirects against `node dist/server.js` on a fresh
// PostgreSQL database while it kills the service's connections, makes the database refuse
// connections for a while, and finally sends SIGTERM; prints what clients saw per phase and
// whether any acknowledged write was lost. Not a test: figures for docs/reliability.md.
//
//   npm run build && FAULT_ADMIN_URL=postgres://postgres@127.0.0.1:5432/postgres node scripts/fault.mjs
//
// FAULT_REFUSE_S (10) sets how long the database refuses connections; FAULT_CLIENTS (16) the load.
//
// `node scripts/fault.mjs failover` runs the failover drill instead (scripts/failover-drill.mjs):
// a cluster of its own (scripts/cluster.mjs, FAULT_CLUSTER_PORT 22300, two nodes on the
// multi-host URL), the primary killed under writes and the standby promoted; it reports downtime
// and acknowledged writes lost, and exits 1 when a node exited or the drill's bounds were missed.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import postgres from 'postgres'

if (process.argv[2] === 'failover') {
  const cluster = await import('./cluster.mjs')
  const { failoverDrill, formatReport } = await import('./failover-drill.mjs')
  const dir = mkdtempSync(join(tmpdir(), 'link-service-failover-'))
  process.once('exit', () => cluster.down(dir))
  const port = Number(process.env.FAULT_CLUSTER_PORT ?? 22300)
  const urls = cluster.layout(port)
  const state = await cluster.up({ port, dir, nodes: 2, nodeEnv: { DATABASE_URL: urls.failover, DATABASE_LISTEN_URL: '', DATABASE_PREPARE: 'on', ACCESS_LOG: 'off', LINK_CREATE_PER_MINUTE: '100000', LINK_CREATE_BURST: '100000' } })
  const report = await failoverDrill({
    nodes: state.urls.nodes,
    kill: () => cluster.stopPrimary(state),
    promote: () => cluster.promoteStandby(state),
    newPrimaryUrl: state.urls.standby,
    clients: Number(process.env.FAULT_CLIENTS ?? 8),
  })
  const alive = state.pids.slice(0, 2).map((pid) => {
    try {
      return process.kill(pid, 0)
    } catch {
      return false
    }
  })
  console.log(formatReport(report))
  console.log(`nodes still running: ${alive.filter(Boolean).length} of ${alive.length}`)
  const ok = report.lost === 0 && report.writesBackMs !== undefined && report.writesBackMs <= 15_000 && alive.every(Boolean) && report.redirectFailures === 0 && report.changeCarried
  process.exit(ok ? 0 : 1)
}

const adminUrl = process.env.FAULT_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const refuseSeconds = Number(process.env.FAULT_REFUSE_S ?? 10)
const clients = Number(process.env.FAULT_CLIENTS ?? 16)
const admin = postgres(adminUrl, { max: 1, onnotice: () => {} })
const name = `link_service_fault_${Date.now()}`
await admin`create database ${admin(name)}`
const dbUrl = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).href

const child = spawn(process.execPath, ['dist/server.js'], {
  env: { ...process.env, DATABASE_URL: dbUrl, PORT: '0', ACCESS_LOG: 'off', LOG_LEVEL: 'info', TRUST_PROXY: '127.0.0.1' },
  stdio: ['ignore', 'pipe', 'inherit'],
})
const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
// Whatever happens to this script, the service it started goes with it.
process.once('exit', () => child.kill('SIGKILL'))
let base
let out = ''
child.stdout.on('data', (c) => {
  out += c
  const m = /"url":"(http:[^"]+)"/.exec(out)
  if (m && base === undefined) base = m[1]
})
for (const until = Date.now() + 30_000; base === undefined; await sleep(50)) if (Date.now() > until) throw new Error('no listening line')

// Each simulated client has its own address (the service trusts 127.0.0.1's X-Forwarded-For), so
// the per-address login limit does not throttle the set-up.
const post = (path, body, token, ip = '10.9.0.1') =>
  fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  })
const users = []
for (let i = 0; i < clients; i++) {
  const username = `f${randomBytes(5).toString('hex')}`
  const ip = `10.9.1.${i + 1}`
  await post('/api/v1/users', { username, password: 'correct horse', display_name: 'Fault' }, undefined, ip)
  const { token } = await (await post('/api/v1/auth/login', { username, password: 'correct horse' }, undefined, ip)).json()
  users.push(token)
}
const hot = (await (await post('/api/v1/links', { url: 'https://example.com/hot' }, users[0])).json()).code
await fetch(`${base}/r/${hot}`, { redirect: 'manual' }) // cached from now on

const acknowledged = new Set()
let phase = 'warm-up'
const stats = new Map()
const note = (kind, status, ms) => {
  const s = stats.get(phase) ?? stats.set(phase, { creates: {}, deletes: {}, redirects: {}, resets: 0, slowestMs: 0 }).get(phase)
  if (status === 'reset') s.resets++
  else s[kind][status] = (s[kind][status] ?? 0) + 1
  s.slowestMs = Math.max(s.slowestMs, Math.round(ms))
}
let running = true
const loop = async (token, i) => {
  for (let n = 0; running; n++) {
    const started = performance.now()
    const kind = n % 2 === 0 ? 'creates' : 'redirects'
    try {
      if (kind === 'creates') {
        // Custom codes: a retried or late write can be told from a new one.
        const code = randomBytes(6).toString('base64url').replace(/[-_]/g, 'x').slice(0, 8)
        const res = await post('/api/v1/links', { url: `https://example.com/${i}/${n}`, code }, token)
        await res.arrayBuffer()
        if (res.status === 201) acknowledged.add(code)
        note(kind, res.status, performance.now() - started)
        if (res.status === 201) {
          // Deleted at once, to stay under the 50-link cap; the tombstone row still proves the create.
          const t = performance.now()
          const del = await fetch(`${base}/api/v1/links/${code}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })
          await del.arrayBuffer()
          note('deletes', del.status, performance.now() - t)
        }
      } else {
        const res = await fetch(`${base}/r/${hot}`, { redirect: 'manual' })
        await res.arrayBuffer()
        note(kind, res.status, performance.now() - started)
      }
    } catch {
      note(kind, 'reset', performance.now() - started)
      if (!running) return
    }
  }
}
const loops = users.map((t, i) => loop(t, i))

const terminate = () => admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name}`
await sleep(3_000)
phase = 'connections killed every second (5 s)'
for (let i = 0; i < 5; i++) {
  await terminate()
  await sleep(1_000)
}
phase = `database refuses connections (${refuseSeconds} s)`
await admin`alter database ${admin(name)} allow_connections false`
await terminate()
await sleep(refuseSeconds * 1_000)
await admin`alter database ${admin(name)} allow_connections true`
phase = 'recovery (5 s)'
const back = Date.now()
let recoveredMs
while (recoveredMs === undefined && Date.now() - back < 30_000) {
  const res = await fetch(`${base}/healthz`).catch(() => undefined)
  if (res?.status === 200) recoveredMs = Date.now() - back
  else await sleep(100)
}
await sleep(Math.max(0, 5_000 - (Date.now() - back)))
phase = 'after SIGTERM'
child.kill('SIGTERM')
const exit = await exited
running = false
await Promise.all(loops)

// Every acknowledged create must be in the database (live or as a tombstone).
const check = postgres(dbUrl, { max: 1, onnotice: () => {} })
const codes = [...acknowledged]
const [{ n }] = await check`select count(*)::int as n from links where code = any(${codes})`
await check.end()
await admin`drop database if exists ${admin(name)} with (force)`
await admin.end()

console.log(`| phase | creates | deletes | redirects (cached code) | resets | slowest answer |`)
console.log(`|---|---|---|---|---|---|`)
const fmt = (o) => Object.entries(o).map(([k, v]) => `${k}×${v}`).join(' ') || '-'
for (const [p, s] of stats) console.log(`| ${p} | ${fmt(s.creates)} | ${fmt(s.deletes)} | ${fmt(s.redirects)} | ${s.resets} | ${s.slowestMs} ms |`)
console.log(`\nrecovered (healthz 200) ${recoveredMs ?? 'never'} ms after the database allowed connections again`)
console.log(`exit after SIGTERM: code ${exit.code} signal ${exit.signal}`)
console.log(`acknowledged creates: ${codes.length}, found in the database: ${n}, lost: ${codes.length - n}`)
