// The cached redirect with 5 webhooks subscribed to link.clicked against none, in the same run:
// alternating rounds of wrk (browser-like visits: `visit` mode of bench.lua) on one server:
// throughput at 32 connections, then latency at 8 (light load), each round. Prints both per round,
// their ratios, the events received and the CPU of a delivery. Usage: node scripts/bench/webhooks.mjs [seconds=8] [rounds=3]
// (needs wrk, and a build: npx tsc -p tsconfig.json && node scripts/build-app.mjs build/app).
// Then deliveries without the load (each link visited once a second, 10 flushes, ABBA): the CPU a
// delivery takes from the service's main thread, the event loop that answers redirects, and from
// its other threads. At saturation the machine's two shared cores move the figures as much.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { commandCpuSeconds, endedChildrenCpuSeconds, mainThreadCpuSeconds, ROOT, runWrk, sleep, spawnTracked, startLogged, stopChild, treeCpuSeconds } from './lib.mjs'

const seconds = Number(process.argv[2] ?? 8)
/** BENCH_NODE_ARGS: node flags for the service (e.g. '--cpu-prof --cpu-prof-dir=/tmp/p'), to see where a delivery's time goes */
const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []
const rounds = Number(process.argv[3] ?? 3)
const tmp = mkdtempSync(join(tmpdir(), 'bench-webhooks-'))
// The receiver answers 200 in a process of its own at the lowest priority (nice 19): it stands in
// for an endpoint on another machine, so it runs on what the service, wrk and the database leave
// of the two cores instead of taking a share of them. It counts what arrives and tells on request.
const RECEIVER = `
import { createServer } from 'node:http'
const totals = { events: 0, clicks: 0, repeats: 0 }
// webhook-ids received: at least once means a repeat is possible, and should be rare
const seen = new Set()
const server = createServer((req, res) => {
  let body = ''
  req.on('data', (c) => (body += c))
  req.on('end', () => {
    totals.events++
    const id = req.headers['webhook-id']
    if (seen.has(id)) totals.repeats++
    else seen.add(id)
    const e = JSON.parse(body)
    if (e.type === 'link.clicked') totals.clicks += e.data.count
    res.end()
  })
})
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
process.on('message', () => process.send(totals))
process.on('disconnect', () => process.exit(0))
`
const receiver = spawnTracked('nice', ['-n', '19', process.execPath, '--input-type=module', '-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
const { port } = await new Promise((resolve) => receiver.once('message', resolve))
const hookUrl = `http://127.0.0.1:${port}/hook`
/** What the receiver counted so far: { events, clicks, repeats } */
const received = () => {
  receiver.send('totals')
  return new Promise((resolve) => receiver.once('message', resolve))
}

const env = {
  PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', DATA_DIR: join(tmp, 'data'), ACCESS_LOG: 'off', LOG_LEVEL: 'warn',
  TRUST_PROXY: '127.0.0.1', ARGON2_MEMORY_KIB: '64', ARGON2_ITERATIONS: '1', WEBHOOK_ALLOW_HTTP: 'on', WEBHOOK_ALLOW_PRIVATE: 'on',
  // The 50 links are made through the API: the default creation limit (30 a minute) would refuse
  // 20 of them, and a fifth of the visits would then be 404s to a code that does not exist.
  LINK_CREATE_PER_MINUTE: '100000', LINK_CREATE_BURST: '100000',
  ...(process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : {}),
}
const server = await startLogged('service', process.execPath, [...nodeArgs, join(ROOT, 'build/src/server.js')], { env: { ...env, LOG_LEVEL: 'info' }, logFile: join(tmp, 'service.log') })
const base = server.listening.url
const api = async (method, path, token, body) => {
  const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body && JSON.stringify(body) })
  return res.status === 204 ? undefined : res.json()
}
try {
  const username = `bench${Date.now()}`
  await api('POST', '/api/v1/users', undefined, { username, password: 'correct horse battery', display_name: 'Bench' })
  const { token } = await api('POST', '/api/v1/auth/login', undefined, { username, password: 'correct horse battery' })
  /** `hooks` endpoints of the receiver on link.clicked; their ids */
  const subscribe = async (hooks) => {
    const ids = []
    for (let h = 0; h < hooks; h++) ids.push((await api('POST', '/api/v1/webhooks', token, { url: hookUrl, events: ['link.clicked'] })).id)
    return ids
  }
  const unsubscribe = async (ids) => {
    for (const id of ids) await api('DELETE', `/api/v1/webhooks/${id}`, token)
  }
  const codes = []
  for (let i = 0; i < 50; i++) {
    const link = await api('POST', '/api/v1/links', token, { url: `https://example.com/${i}` })
    if (typeof link.code !== 'string') throw new Error(`create refused: ${JSON.stringify(link)}`)
    codes.push(link.code)
  }
  const file = join(tmp, 'codes.tsv')
  writeFileSync(file, codes.join('\n') + '\n')
  for (const c of codes) await fetch(`${base}/r/${c}`, { redirect: 'manual' }) // every code cached
  const wrk = (connections) => runWrk({ url: base, connections, seconds, args: ['visit', file, '1', '7'] })
  const rows = []
  for (let r = 1; r <= rounds; r++) {
    // ABBA: each arm goes first in every other round, so a drift of the machine favours neither.
    for (const hooks of r % 2 === 1 ? [0, 5] : [5, 0]) {
      const ids = await subscribe(hooks)
      const before = (await received()).events
      // CPU of the service (with its database, when embedded), of the receiver, of wrk and of a
      // PostgreSQL on this machine (0 without one): each has its share of the two cores.
      const cpu0 = { service: treeCpuSeconds(server.child.pid), main: mainThreadCpuSeconds(server.child.pid), receiver: treeCpuSeconds(receiver.pid), wrk: endedChildrenCpuSeconds(), database: commandCpuSeconds('postgres') }
      const w = await wrk(32)
      const wrkCpu = endedChildrenCpuSeconds() - cpu0.wrk
      // Its main thread, the event loop that answers redirects: below the round's seconds, it
      // waited, for work or for a core that others held.
      const main = mainThreadCpuSeconds(server.child.pid) - cpu0.main
      await sleep(1_500) // the last flush's events
      const service = treeCpuSeconds(server.child.pid) - cpu0.service
      const database = commandCpuSeconds('postgres') - cpu0.database
      const receiverCpu = treeCpuSeconds(receiver.pid) - cpu0.receiver
      const delivered = (await received()).events - before // in the same window as the CPU
      // Then light load (8 connections, the bench's latency point): the deliveries go on (each
      // flush still carries the 50 links), and what a visitor sees is the latency.
      const light = await wrk(8)
      rows.push({ round: r, webhooks: hooks, rps: Math.round(w.rps), p50_ms: w.p50_us / 1000, p99_ms: w.p99_us / 1000, errors: w.socket_errors + w.status_errors + light.socket_errors + light.status_errors, events: delivered,
        service_cpu_s: Number(service.toFixed(2)), main_cpu_s: Number(main.toFixed(2)), wrk_cpu_s: Number(wrkCpu.toFixed(2)), database_cpu_s: Number(database.toFixed(2)), receiver_cpu_s: Number(receiverCpu.toFixed(2)), light_p50_ms: light.p50_us / 1000, light_p99_ms: light.p99_us / 1000 })
      await unsubscribe(ids)
    }
  }
  console.table(rows)

  const quiet = []
  for (const hooks of [5, 0, 0, 5]) {
    const ids = await subscribe(hooks)
    const pid = server.child.pid
    const cpu0 = { main: mainThreadCpuSeconds(pid), service: treeCpuSeconds(pid) }
    const before = (await received()).events
    for (let i = 0; i < 10; i++) {
      await Promise.all(codes.map((c) => fetch(`${base}/r/${c}`, { redirect: 'manual' }).then((r) => r.arrayBuffer())))
      await sleep(1_000)
    }
    await sleep(1_500) // the last flush's events
    const main = mainThreadCpuSeconds(pid) - cpu0.main
    quiet.push({ webhooks: hooks, events: (await received()).events - before, main_cpu_s: Number(main.toFixed(2)), other_threads_cpu_s: Number((treeCpuSeconds(pid) - cpu0.service - main).toFixed(2)) })
    await unsubscribe(ids)
  }
  console.table(quiet)
  const med = (xs) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]
  const arm = (hooks) => med(rows.filter((x) => x.webhooks === hooks).map((x) => x.rps))
  // Each round's own ratios: rounds of one pair ran back to back, on the same machine state.
  const pair = (r) => [rows.find((x) => x.round === r && x.webhooks === 5), rows.find((x) => x.round === r && x.webhooks === 0)]
  const roundsRun = [...new Set(rows.map((x) => x.round))]
  const ratioOf = (k) => roundsRun.map((r) => { const [a, b] = pair(r); return a[k] / b[k] })
  const ratios = ratioOf('rps')
  // What one delivery costs the machine: the extra CPU of a round with webhooks over its pair without, per event received.
  const perDelivery = roundsRun.map((r) => {
    const [a, b] = pair(r)
    const beyond = (k) => ((a[k] - (b[k] * a.rps) / b.rps) * 1e6) / a.events
    return { service: beyond('service_cpu_s'), database: beyond('database_cpu_s'), receiver: ((a.receiver_cpu_s - b.receiver_cpu_s) * 1e6) / a.events }
  })
  const line = (label, xs) => `${label} ${med([...xs]).toFixed(3)} (${xs.map((x) => x.toFixed(2)).join(' ')})`
  console.log(`CPU per delivery, median of the rounds (beyond the same requests' without webhooks): the service ${med(perDelivery.map((x) => x.service)).toFixed(0)} µs, PostgreSQL on this machine ${med(perDelivery.map((x) => x.database)).toFixed(0)} µs; the receiver ${med(perDelivery.map((x) => x.receiver)).toFixed(0)} µs`)
  const quietMean = (hooks, k) => {
    const arm = quiet.filter((x) => x.webhooks === hooks)
    return arm.reduce((sum, x) => sum + x[k], 0) / arm.length
  }
  const quietPer = (k) => (((quietMean(5, k) - quietMean(0, k)) * 1e6) / quietMean(5, 'events')).toFixed(0)
  console.log(`CPU per delivery without the load (beyond the same minutes' without webhooks): the service's main thread ${quietPer('main_cpu_s')} µs, its other threads ${quietPer('other_threads_cpu_s')} µs`)
  const { events, clicks, repeats } = await received()
  console.log(`median requests/s at 32 connections: none ${arm(0)}, 5 webhooks ${arm(5)} (${((arm(5) / arm(0) - 1) * 100).toFixed(1)}%); link.clicked visits reported: ${clicks}; deliveries received ${events}, of them repeats of a webhook-id already received ${repeats}`)
  console.log(`5 webhooks ÷ none, median of the rounds' ratios: ${line('requests/s at 32 connections', ratios)}; ${line('p50 at 8 connections', ratioOf('light_p50_ms'))}; ${line('p99 at 8 connections', ratioOf('light_p99_ms'))}`)
} finally {
  await stopChild(server.child)
  receiver.disconnect()
  rmSync(tmp, { recursive: true, force: true })
}
