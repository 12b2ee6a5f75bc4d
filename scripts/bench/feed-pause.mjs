// What loading a big threat feed costs the service: the event loop's longest pause while a
// 1,000,000-host hosts file is read, parsed and loaded (refreshSource, as the refresh job runs it),
// and the peak RSS of a real service (server.js) that loads it from BLOCKLIST_SOURCES.
//
//   node scripts/bench/feed-pause.mjs [TREE]      (TREE: a checkout built with `npx tsc -p tsconfig.json`, default this one)
//
// Env: BENCH_FEED_HOSTS (1000000), BENCH_DATABASE_URL (a fresh, empty PostgreSQL database;
// default: the embedded database in a temporary directory). Prints the figures; keeps nothing.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const TREE = resolve(process.argv[2] ?? '.')
const HOSTS = Number(process.env.BENCH_FEED_HOSTS || 1_000_000)
const DATABASE_URL = process.env.BENCH_DATABASE_URL || undefined
const tmp = mkdtempSync(join(os.tmpdir(), 'feed-pause-'))
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }))
const say = (line) => process.stdout.write(line + '\n')

const feed = join(tmp, 'feed.txt')
const lines = ['# bench feed', '127.0.0.1 localhost']
for (let i = 0; i < HOSTS; i++) lines.push(`0.0.0.0 h${i.toString(36)}.phish-${i % 997}.example`)
writeFileSync(feed, lines.join('\n') + '\n')
lines.length = 0
say(`feed: ${HOSTS.toLocaleString('en-US')} hosts, ${(readFileSync(feed).length / 1e6).toFixed(1)} MB; tree ${TREE}; ${DATABASE_URL === undefined ? 'embedded database' : 'PostgreSQL'}`)

// 1. In this process: the longest gap between 1 ms timers, and the event-loop delay histogram's max.
const { openDatabase } = await import(join(TREE, 'build/src/db/open.js'))
const { migrate, MIGRATIONS_DIR } = await import(join(TREE, 'build/src/db/migrate.js'))
const { refreshSource } = await import(join(TREE, 'build/src/blocklist/refresh.js'))
const db = await openDatabase(DATABASE_URL, join(tmp, 'data'), 600_000)
await migrate(db.sql, MIGRATIONS_DIR)
const histogram = monitorEventLoopDelay({ resolution: 1 })
let last = performance.now()
let longest = 0
const timer = setInterval(() => {
  const now = performance.now()
  longest = Math.max(longest, now - last)
  last = now
}, 1)
histogram.enable()
const started = performance.now()
const result = await refreshSource(db.sql, 'bench', feed, { force: true, reread: true })
const seconds = (performance.now() - started) / 1000
clearInterval(timer)
histogram.disable()
await db.close()
say(`refresh: ${result.outcome}${result.load ? `, ${result.load.entries} entries` : ` (${result.error})`} in ${seconds.toFixed(1)} s`)
say(`longest pause of the event loop: ${longest.toFixed(1)} ms between 1 ms timers; delay histogram max ${(histogram.max / 1e6).toFixed(1)} ms, p99 ${(histogram.percentile(99) / 1e6).toFixed(1)} ms`)

// 2. A real service loading it at start: its peak and settled RSS once the feed is loaded.
if (process.env.BENCH_SKIP_SERVICE !== '1') {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', LOG_LEVEL: 'info', BLOCKLIST_SOURCES: feed, ...(DATABASE_URL === undefined ? { DATA_DIR: join(tmp, 'svc') } : { DATABASE_URL }) }
  // A fresh source name each run: on PostgreSQL the database keeps the in-process run's 'bench' source.
  const child = spawn(process.execPath, [join(TREE, 'build/src/server.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const loaded = new Promise((done, fail) => {
    const look = (s) => {
      out += s
      if (/blocklist (loaded|refresh failed|refresh refused)/.test(out)) done()
    }
    child.stdout.setEncoding('utf8').on('data', look)
    child.stderr.setEncoding('utf8').on('data', look)
    child.once('exit', (code) => fail(new Error(`the service exited (${code}): ${out.slice(-2000)}`)))
  })
  const t0 = performance.now()
  await loaded
  // The embedded engine restarts node with a flag: the process that serves is the child's child.
  const status = (pid) => readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (text, field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN)
  const pids = [child.pid, ...readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)]
  const serving = pids.at(-1)
  const s = status(serving)
  say(`service (pid ${serving}): feed loaded ${((performance.now() - t0) / 1000).toFixed(1)} s after start; peak RSS (VmHWM) ${(kb(s, 'VmHWM') / 1024).toFixed(0)} MB, RSS now ${(kb(s, 'VmRSS') / 1024).toFixed(0)} MB`)
  child.kill('SIGTERM')
  await new Promise((done) => child.once('exit', done))
}
