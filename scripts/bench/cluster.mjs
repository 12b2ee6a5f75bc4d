// The cluster bench (docs/scale.md): scripts/cluster.mjs brings up a primary, a synchronous
// standby, a read replica, PgBouncer in transaction mode, three nodes and HAProxy; wrk then drives
// cached redirects and creates through one node, and through the balancer in front of all three,
// in alternating rounds. Also measured: what a redirect miss, a create and the visit flushes
// cost the primary (its committed transactions, from pg_stat_database) and a miss's latency
// answered by the replica.
//
//   npm run build && node scripts/bench/cluster.mjs
//
// BENCH_SECONDS (8) per point, BENCH_ROUNDS (3), BENCH_CLUSTER_PORT (22400). Every process it
// starts is stopped and its folder removed, on failure too. Prints Markdown.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir, availableParallelism } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { down, up } from '../cluster.mjs'
import { median, runWrk, sleep } from './lib.mjs'

const seconds = Number(process.env.BENCH_SECONDS ?? 8)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const port = Number(process.env.BENCH_CLUSTER_PORT ?? 22400)
const dir = mkdtempSync(join(tmpdir(), 'link-service-bench-cluster-'))
process.once('exit', () => down(dir))
process.once('SIGINT', () => process.exit(130))

const state = await up({
  port,
  dir,
  nodes: 3,
  // A cheap password hash: the bench registers hundreds of accounts, and measures no login.
  nodeEnv: { ACCESS_LOG: 'off', LINK_CREATE_PER_MINUTE: '100000', LINK_CREATE_BURST: '100000', LOG_LEVEL: 'warn', ARGON2_MEMORY_KIB: '64', ARGON2_ITERATIONS: '1' },
})
const { balancer, nodes, primary } = state.urls
const post = async (base, path, body, token) => {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.7.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  })
  return res.json()
}
const account = async (i) => {
  const username = `bench${i}x${Date.now().toString(36)}`
  await post(balancer, '/api/v1/users', { username, password: 'correct horse', display_name: 'Bench' })
  return (await post(balancer, '/api/v1/auth/login', { username, password: 'correct horse' })).token
}
const accounts = async (n, from) => {
  const all = []
  for (let i = 0; i < n; i += 16) all.push(...(await Promise.all(Array.from({ length: Math.min(16, n - i) }, (_, k) => account(from + i + k)))))
  return all
}
// Each account may hold 50 links (the service's cap): owners for the seeded links, and enough
// fresh creators that the create points never reach it.
const owners = await accounts(26, 0)
const tokens = await accounts(Number(process.env.BENCH_CREATORS ?? 400), 100)
const make = async (n, from) => {
  const codes = []
  for (let i = from; i < from + n; i++) {
    const { code } = await post(balancer, '/api/v1/links', { url: `https://example.com/${i}` }, owners[Math.floor(i / 50)])
    if (code === undefined) throw new Error(`seeding link ${i} failed`)
    codes.push(code)
  }
  return codes
}
const hot = await make(1_000, 0)
const cold = await make(300, 1_000)
const seededAt = Date.now()
writeFileSync(join(dir, 'codes.txt'), `${hot.join('\n')}\n`)
writeFileSync(join(dir, 'tokens.txt'), `${tokens.join('\n')}\n`)
// Warm every node's cache with the hot codes.
for (const base of nodes) for (const code of hot) await (await fetch(`${base}/r/${code}`, { redirect: 'manual' })).arrayBuffer()

const admin = postgres(primary, { max: 1, onnotice: () => {} })
const commits = async () => Number((await admin`select xact_commit::bigint as n from pg_stat_database where datname = 'link_service'`)[0].n)

const points = [
  ['redirect (cached)', 'redirect', ['redirect', join(dir, 'codes.txt'), '1', '97']],
  ['create', 'create', ['create', join(dir, 'tokens.txt')]],
]
const results = new Map()
for (let round = 0; round < rounds; round++) {
  for (const [label, , args] of points) {
    for (const [target, url] of [['1 node', nodes[0]], ['3 nodes behind HAProxy', balancer]]) {
      const before = await commits()
      const r = await runWrk({ url, connections: 32, seconds, threads: 1, args })
      const xacts = (await commits()) - before
      const key = `${label}|${target}`
      const list = results.get(key) ?? results.set(key, []).get(key)
      list.push({ rps: r.rps, p99: r.p99_us, xactsPerOp: xacts / r.requests, errors: r.socket_errors + r.status_errors })
    }
  }
}

// A miss on codes older than the replicas' "recently changed" window (32 s): answered by the replica.
await sleep(Math.max(0, 33_000 - (Date.now() - seededAt)))
const missMs = []
const before = await commits()
for (const code of cold) {
  const t = performance.now()
  await (await fetch(`${nodes[1]}/r/${code}`, { redirect: 'manual' })).arrayBuffer()
  missMs.push(performance.now() - t)
}
// Visits of the misses are flushed within VISIT_FLUSH_MS: wait for them, so that they count.
await sleep(1_500)
const missXacts = ((await commits()) - before) / cold.length
await admin.end()

const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-')
console.log(`Cluster bench: ${availableParallelism()} cores for everything (wrk, HAProxy, PgBouncer, three PostgreSQL servers, three nodes); ${rounds} rounds of ${seconds} s, medians.\n`)
console.log('| point | target | requests/s | ratio to 1 node | p99 | primary transactions per request | errors |')
console.log('|---|---|---|---|---|---|---|')
for (const [label] of points) {
  const one = median(results.get(`${label}|1 node`).map((r) => r.rps))
  for (const target of ['1 node', '3 nodes behind HAProxy']) {
    const list = results.get(`${label}|${target}`)
    const rps = median(list.map((r) => r.rps))
    console.log(`| ${label} | ${target} | ${fmt(rps)} | ${fmt(rps / one, 2)} | ${fmt(median(list.map((r) => r.p99)) / 1000, 1)} ms | ${fmt(median(list.map((r) => r.xactsPerOp)), 3)} | ${list.reduce((a, r) => a + r.errors, 0)} |`)
  }
}
console.log(`\nredirect miss answered by the replica: median ${fmt(median(missMs), 2)} ms (one at a time, ${cold.length} codes); primary transactions per miss (its visit flush included): ${fmt(missXacts, 3)}`)
