// The embedded engine's memory and its price: the service on PGlite as it ships (V8's baseline
// WebAssembly compiler only) against V8's default tiers (`node --no-liftoff-only`), alternating
// in each round. For each: VmRSS one second after the first start on a fresh DATA_DIR (initdb and
// the migrations), after a restart, and after the load; and the API's throughput on the engine,
// a read (GET /api/v1/links) and a write (PATCH /api/v1/links/{code}), 16 connections, and the
// service's CPU time per request (what the compiler changes; on a busy machine the rate swings
// with the neighbours' load, the CPU time far less).
// Needs dist/ (npm run build) and wrk. Run it on each Node line to compare them:
//   node scripts/bench/embedded-memory.mjs [rounds, 3] [seconds per point, 8]
//   PATH="$(scripts/node-line.sh 26):$PATH" node scripts/bench/embedded-memory.mjs
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median, runWrk, sleep, treeCpuSeconds, treeMemory } from './lib.mjs'
import { start, stop } from './processes.mjs'

const ROUNDS = Number(process.argv[2] ?? 3)
const SECONDS = Number(process.argv[3] ?? 8)
const LINKS = 50
const VARIANTS = { shipped: [], 'V8 default tiers': ['--no-liftoff-only'] }
// BENCH_WASM_FLAGS="--wasm-tiering-budget=18000000 ...": a third variant, node started with these flags.
if (process.env.BENCH_WASM_FLAGS) VARIANTS[process.env.BENCH_WASM_FLAGS] = process.env.BENCH_WASM_FLAGS.split(' ')
const MB = 2 ** 20
const say = (line) => process.stdout.write(`${line}\n`)

const tmp = mkdtempSync(join(tmpdir(), 'bench-embedded-'))
const results = Object.fromEntries(Object.keys(VARIANTS).map((name) => [name, { first: [], restart: [], loaded: [], list: [], patch: [], listCpu: [], patchCpu: [] }]))

async function call(url, method, path, body, token) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
  return res.json()
}

/** One user with LINKS links; the files wrk's list and patch modes read. */
async function seed(url, dir) {
  await call(url, 'POST', '/api/v1/users', { username: 'bench', password: 'bench-password-1', display_name: 'Bench' })
  const { token } = await call(url, 'POST', '/api/v1/auth/login', { username: 'bench', password: 'bench-password-1' })
  const lines = []
  for (let i = 0; i < LINKS; i++) {
    const link = await call(url, 'POST', '/api/v1/links', { url: `https://www.example.org/articles/${i}` }, token)
    lines.push(`${token}\t${link.code}\t${link.url}`)
  }
  writeFileSync(join(dir, 'tokens'), `${token}\n`)
  writeFileSync(join(dir, 'patch'), `${lines.join('\n')}\n`)
}

// Each start logs to a file of its own: start() waits for its "listening" line.
const service = (name, dir, phase) =>
  start(`${name}, ${phase}`, { kind: 'service', env: { DATA_DIR: join(dir, 'data'), LINK_CREATE_PER_MINUTE: '100000', LINK_CREATE_BURST: '100000' }, nodeArgs: VARIANTS[name] }, { tmp: dir, database: {} })

try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of round % 2 ? Object.keys(VARIANTS) : Object.keys(VARIANTS).reverse()) {
      const dir = mkdtempSync(join(tmp, 'round-'))
      const r = results[name]
      let svc = await service(name, dir, 'first start')
      await sleep(1_000)
      r.first.push(treeMemory(svc.pid).rss)
      await seed(svc.url, dir)
      await stop(svc, say)
      svc = await service(name, dir, 'restart')
      await sleep(1_000)
      r.restart.push(treeMemory(svc.pid).rss)
      await runWrk({ url: svc.url, connections: 16, seconds: 2, args: ['list', join(dir, 'tokens')] }) // warm-up
      for (const [mode, file] of [['list', 'tokens'], ['patch', 'patch']]) {
        const cpu = treeCpuSeconds(svc.pid)
        const run = await runWrk({ url: svc.url, connections: 16, seconds: SECONDS, args: [mode, join(dir, file)] })
        r[mode].push(run.rps)
        r[`${mode}Cpu`].push(((treeCpuSeconds(svc.pid) - cpu) * 1e6) / run.requests)
      }
      r.loaded.push(treeMemory(svc.pid).rss)
      await stop(svc, say)
      rmSync(dir, { recursive: true, force: true })
    }
    say(`round ${round} of ${ROUNDS} done`)
  }
  const baseline = results['V8 default tiers']
  const mb = (values) => `${(median(values) / MB).toFixed(0)} MB`
  const rps = (values, of) => `${median(values).toFixed(0)}/s (${(median(values) / median(of)).toFixed(2)}×)`
  say(`\nNode ${process.version}, ${ROUNDS} rounds, medians; throughput also as a ratio to V8's default tiers:`)
  const cpu = (values, of) => `${median(values).toFixed(0)} µs (${(median(values) / median(of)).toFixed(2)}×)`
  say('| Variant | RSS idle, first start | RSS idle, restart | RSS after the load | GET /api/v1/links | its CPU per request | PATCH /api/v1/links/{code} | its CPU per request |')
  say('|---|---|---|---|---|---|---|---|')
  for (const [name, r] of Object.entries(results)) {
    say(`| ${name} | ${mb(r.first)} | ${mb(r.restart)} | ${mb(r.loaded)} | ${rps(r.list, baseline.list)} | ${cpu(r.listCpu, baseline.listCpu)} | ${rps(r.patch, baseline.patch)} | ${cpu(r.patchCpu, baseline.patchCpu)} |`)
  }
  for (const [name, r] of Object.entries(results)) say(`${name}: list ${r.list.map((v) => v.toFixed(0)).join(', ')}; patch ${r.patch.map((v) => v.toFixed(0)).join(', ')}`)
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
