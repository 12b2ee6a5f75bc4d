// The cached redirect of this checkout against an older commit's, and both against the node:http
// ceiling, in alternating rounds of one run (issue 22's A/B: f8aed4c is the commit before the
// statistics, abuse controls and session cache landed). Both commits are built once in scratch
// folders (git archive, npm ci, their own build; see built()) and kept there for the next run. Each
// service runs on the embedded database in its own data folder, with 50 links made through its
// API, every code cached before the rounds; wrk walks them with 64 connections.
// Usage: node scripts/bench/ab.mjs [commit=f8aed4c] [rounds=5] [seconds=8]
// (needs wrk; both commits are built in scratch folders, HEAD as committed).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BENCH_DIR, freePort, linksThroughApi, median, quickServiceEnv, ROOT, runWrk, startLogged, stopChild } from './lib.mjs'

const commit = process.argv[2] ?? 'f8aed4c'
const rounds = Number(process.argv[3] ?? 5)
const seconds = Number(process.argv[4] ?? 8)
const say = (line) => process.stdout.write(`${line}\n`)
const sha = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', commit], { encoding: 'utf8' }).trim()
const head = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()

/**
 * A commit built in a scratch folder of its own (git archive, npm ci, its build), kept for the next
 * run. Both arms are built so: the same code run from this checkout measured 0.82 of itself run from
 * a scratch folder, in this harness, on this machine (its cause not found), so a checkout against a
 * scratch build compares places as well as code.
 */
function built(commit) {
  const scratch = join(tmpdir(), `link-service-${commit}`)
  if (!existsSync(join(scratch, 'dist', 'server.js'))) {
    say(`building ${commit} in ${scratch}`)
    rmSync(scratch, { recursive: true, force: true })
    execFileSync('sh', ['-c', `mkdir -p '${scratch}' && git -C '${ROOT}' archive ${commit} | tar -x -C '${scratch}'`])
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: scratch, stdio: 'ignore' })
    execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: scratch, stdio: 'inherit' })
    // Since the web app is served, a service starts only with it built.
    if (existsSync(join(scratch, 'scripts', 'build-app.mjs'))) execFileSync(process.execPath, ['scripts/build-app.mjs'], { cwd: scratch, stdio: 'ignore' })
  }
  return scratch
}

const tmp = mkdtempSync(join(tmpdir(), 'bench-ab-'))

async function service(name, root) {
  const env = quickServiceEnv(join(tmp, name))
  const proc = await startLogged(name, process.execPath, [join(root, 'dist', 'server.js')], { env, cwd: root, logFile: join(tmp, `${name}.log`) })
  const base = proc.listening.url
  const lines = await linksThroughApi(base)
  const file = join(tmp, `${name}.tsv`)
  writeFileSync(file, lines.join('\n') + '\n')
  return { name, child: proc.child, url: base, file }
}

async function ceiling(file) {
  const port = await freePort()
  const env = { PATH: process.env.PATH, CEILING_PORT: String(port), CEILING_LINKS: file, CEILING_WORKERS: '1' }
  const proc = await startLogged('ceiling', process.execPath, [join(BENCH_DIR, 'ceiling.mjs')], { env, logFile: join(tmp, 'ceiling.log') })
  return { name: 'ceiling', child: proc.child, url: `http://127.0.0.1:${port}`, file }
}

const procs = []
try {
  const now = await service(`head-${head}`, built(head))
  procs.push(now)
  const old = await service(`old-${sha}`, built(sha))
  procs.push(old)
  const bare = await ceiling(now.file)
  procs.push(bare)
  const rows = []
  for (let r = 1; r <= rounds; r++) {
    // Each takes every place in the order over the rounds, so a drifting machine favours none.
    const order = [now, old, bare]
    for (let k = 0; k < r % 3; k++) order.push(order.shift())
    for (const p of order) {
      const w = await runWrk({ url: p.url, connections: 64, seconds, args: ['redirect', p.file, String(r * 7), '0'] })
      rows.push({ round: r, process: p.name, rps: Math.round(w.rps), p50_ms: w.p50_us / 1000, p99_ms: w.p99_us / 1000, errors: w.socket_errors + w.status_errors })
    }
  }
  console.table(rows)
  const ratio = (a, b) => median([...new Set(rows.map((x) => x.round))].map((r) => rows.find((x) => x.round === r && x.process === a.name).rps / rows.find((x) => x.round === r && x.process === b.name).rps))
  const med = (p) => median(rows.filter((x) => x.process === p.name).map((x) => x.rps))
  say(`median requests/s: ${now.name} ${med(now)}, ${old.name} ${med(old)}, ceiling ${med(bare)}`)
  say(`median of the rounds' ratios: ${now.name} ÷ ceiling ${ratio(now, bare).toFixed(3)}, ${old.name} ÷ ceiling ${ratio(old, bare).toFixed(3)}, ${now.name} ÷ ${old.name} ${ratio(now, old).toFixed(3)}`)
} finally {
  for (const p of procs) await stopChild(p.child)
  rmSync(tmp, { recursive: true, force: true })
}
