// Services of this checkout's dist/ that differ in their settings (the arms), each against the
// node:http ceiling in alternating rounds of one run: browser-like visits at 64 connections and
// cached redirects at 8 (p99). Each arm runs on the embedded database in a folder of its own, with
// 200 links made through its API; its log (stdout) goes to a file in `logDir` (default: the
// temporary folder, on the disk), so that where the access lines go is a setting too.
// Prints every run and, per figure, each arm's median and its median ratio to the ceiling.
//   ARMS='[{"name":"default"},{"name":"tmpfs","logDir":"/dev/shm"},{"name":"api","env":{"ACCESS_LOG":"api"}}]' \
//     node scripts/bench/arms.mjs [rounds=4] [seconds=5]
// An arm: { name, env (added to the service's), flags (node's), logDir, dist (another build's
// dist/ folder, to set two commits side by side) }. Needs dist/ and wrk.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BENCH_DIR, freePort, linksThroughApi, median, quickServiceEnv, ROOT, runWrk, startLogged, stopChild } from './lib.mjs'

const ARMS = JSON.parse(process.env.ARMS ?? '[{"name":"default"}]')
const rounds = Number(process.argv[2] ?? 4)
const seconds = Number(process.argv[3] ?? 5)
const tmp = mkdtempSync(join(tmpdir(), 'bench-arms-'))

async function service({ name, env = {}, flags = [], logDir = tmp, dist = join(ROOT, 'dist') }) {
  const logFile = join(logDir, `bench-arm-${name}-${process.pid}.log`)
  const proc = await startLogged(name, process.execPath, [...flags, join(dist, 'server.js')], { env: { ...quickServiceEnv(join(tmp, name)), ...env }, logFile })
  const url = proc.listening.url
  const lines = await linksThroughApi(url, { accounts: 4, urlFor: (a, i) => `https://www.example.org/articles/${a}-${i}/a-readable-slug?utm_source=bench` })
  const file = join(tmp, `${name}.tsv`)
  writeFileSync(file, lines.join('\n') + '\n')
  return { name, child: proc.child, url, file, logFile }
}

const procs = []
try {
  const arms = []
  for (const arm of ARMS) {
    const p = await service(arm)
    procs.push(p)
    arms.push(p)
  }
  const port = await freePort()
  const env = { PATH: process.env.PATH, CEILING_PORT: String(port), CEILING_LINKS: arms[0].file, CEILING_WORKERS: '1' }
  const c = await startLogged('ceiling', process.execPath, [join(BENCH_DIR, 'ceiling.mjs')], { env, logFile: join(tmp, 'ceiling.log') })
  const ceiling = { name: 'ceiling', child: c.child, url: `http://127.0.0.1:${port}`, file: arms[0].file }
  procs.push(ceiling)
  const rows = []
  for (let r = 1; r <= rounds; r++) {
    // Each takes every place in the order over the rounds, so a drifting machine favours none.
    const order = [...arms, ceiling]
    for (let k = 0; k < r % order.length; k++) order.push(order.shift())
    for (const p of order) {
      const visit = await runWrk({ url: p.url, connections: 64, seconds, args: ['visit', p.file, String(r * 7), '0'] })
      const light = await runWrk({ url: p.url, connections: 8, seconds, args: ['redirect', p.file, String(r * 7), '0'] })
      rows.push({ round: r, process: p.name, visit_rps: Math.round(visit.rps), light_rps: Math.round(light.rps), light_p99_ms: Math.round(light.p99_us / 10) / 100 })
    }
  }
  console.table(rows)
  for (const figure of ['visit_rps', 'light_p99_ms']) {
    const of = (name, round) => rows.find((x) => x.round === round && x.process === name)[figure]
    const parts = arms.map((p) => {
      const ratio = median(Array.from({ length: rounds }, (_, i) => of(p.name, i + 1) / of('ceiling', i + 1)))
      return `${p.name} ${median(rows.filter((x) => x.process === p.name).map((x) => x[figure]))} (${ratio.toFixed(2)}× ceiling)`
    })
    console.log(`${figure}: ${parts.join(', ')}, ceiling ${median(rows.filter((x) => x.process === 'ceiling').map((x) => x[figure]))}`)
  }
} finally {
  for (const p of procs) await stopChild(p.child)
  for (const p of procs) if (p.logFile !== undefined) rmSync(p.logFile, { force: true })
  rmSync(tmp, { recursive: true, force: true })
}
