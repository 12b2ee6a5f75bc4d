// Where a service's CPU goes, by thread: a fresh service of a build (embedded, 200 links made
// through its API), under wrk's browser-like visits at 64 connections; the CPU of each of its
// threads (from /proc) over the measured run, per request. Needs the build and wrk.
//   [DIST=other build's dist/] [ENV='{"ACCESS_LOG":"api"}'] node scripts/bench/threads.mjs [seconds=10]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { linksThroughApi, quickServiceEnv, ROOT, runWrk, startLogged, stopChild, threadCpuSeconds } from './lib.mjs'

const seconds = Number(process.argv[2] ?? 10)
const tmp = mkdtempSync(join(tmpdir(), 'bench-threads-'))

const proc = await startLogged('service', process.execPath, [join(process.env.DIST ?? join(ROOT, 'dist'), 'server.js')], { env: { ...quickServiceEnv(join(tmp, 'data')), ...JSON.parse(process.env.ENV ?? '{}') }, logFile: join(tmp, 'service.log') })
try {
  const lines = await linksThroughApi(proc.listening.url, { accounts: 4, urlFor: (a, i) => `https://www.example.org/articles/${a}-${i}/a-readable-slug?utm_source=bench` })
  const file = join(tmp, 'links.tsv')
  writeFileSync(file, lines.join('\n') + '\n')
  await runWrk({ url: proc.listening.url, connections: 64, seconds: 2, args: ['visit', file, '7', '0'] })
  const pid = proc.child.pid
  const before = threadCpuSeconds(pid)
  const run = await runWrk({ url: proc.listening.url, connections: 64, seconds, args: ['visit', file, '7', '0'] })
  const used = [...threadCpuSeconds(pid)].map(([tid, cpu]) => [tid === String(pid) ? 'main' : `thread ${tid}`, cpu - (before.get(tid) ?? 0)])
  const requests = run.rps * seconds
  console.log(`${Math.round(run.rps)} requests/s`)
  for (const [name, cpu] of used.sort((a, b) => b[1] - a[1])) if (cpu > 0) console.log(`${name.padEnd(18)} ${((cpu * 1e6) / requests).toFixed(2)} µs/request`)
} finally {
  await stopChild(proc.child)
  rmSync(tmp, { recursive: true, force: true })
}
