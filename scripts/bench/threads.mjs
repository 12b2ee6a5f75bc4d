// Where a service's CPU goes, by thread: a fresh service of this checkout's dist/ (embedded, 200
// links made through its API), under wrk's browser-like visits at 64 connections; the CPU of each
// of its threads (from /proc, by name) over the measured run, per request. Needs dist/ and wrk.
//   [ENV='{"ACCESS_LOG":"api"}'] node scripts/bench/threads.mjs [seconds=10]
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { linksThroughApi, quickServiceEnv, ROOT, runWrk, startLogged, stopChild } from './lib.mjs'

const seconds = Number(process.argv[2] ?? 10)
const tmp = mkdtempSync(join(tmpdir(), 'bench-threads-'))
const TICK = 100 // USER_HZ

/** CPU seconds by thread id, with each thread's name. */
function threads(pid) {
  const out = new Map()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      out.set(tid, { name, cpu: (Number(f[11]) + Number(f[12])) / TICK })
    } catch {}
  }
  return out
}

const proc = await startLogged('service', process.execPath, [join(process.env.DIST ?? join(ROOT, 'dist'), 'server.js')], { env: { ...quickServiceEnv(join(tmp, 'data')), ...JSON.parse(process.env.ENV ?? '{}') }, logFile: join(tmp, 'service.log') })
try {
  const lines = await linksThroughApi(proc.listening.url, { accounts: 4, urlFor: (a, i) => `https://www.example.org/articles/${a}-${i}/a-readable-slug?utm_source=bench` })
  const file = join(tmp, 'links.tsv')
  writeFileSync(file, lines.join('\n') + '\n')
  await runWrk({ url: proc.listening.url, connections: 64, seconds: 2, args: ['visit', file, '7', '0'] })
  const before = threads(proc.child.pid)
  const run = await runWrk({ url: proc.listening.url, connections: 64, seconds, args: ['visit', file, '7', '0'] })
  const after = threads(proc.child.pid)
  const requests = run.rps * seconds
  const byName = new Map()
  for (const [tid, { name, cpu }] of after) byName.set(tid === String(proc.child.pid) ? 'main' : `${name} ${tid}`, (byName.get(name) ?? 0) + cpu - (before.get(tid)?.cpu ?? 0))
  console.log(`${Math.round(run.rps)} requests/s`)
  for (const [name, cpu] of [...byName].sort((a, b) => b[1] - a[1])) if (cpu > 0) console.log(`${name.padEnd(18)} ${(cpu * 1e6 / requests).toFixed(2)} µs/request`)
} finally {
  await stopChild(proc.child)
  rmSync(tmp, { recursive: true, force: true })
}
