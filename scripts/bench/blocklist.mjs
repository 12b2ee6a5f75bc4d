// `npm run bench:blocklist`: what a million-host threat feed costs. Each round, interleaved:
// redirects on 1k links without any feed (hot from the cache, and read from the database with
// CACHE_MAX_BYTES=0), then the feed loaded with `link-service block import` (timed: read, parse,
// load), then the same redirects with it, then the feed removed for the next round. Prints a table;
// writes nothing. Options (env): BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_FEED_HOSTS (1000000),
// BENCH_DATABASE_URL or BENCH_ADMIN_URL as for `npm run bench` (default: the embedded database).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { codeFor, prepareDatabase, seedSmall } from './db.mjs'
import { ROOT, median, runWrk, sleep, stopAll } from './lib.mjs'
import { start, stop } from './processes.mjs'

const say = (line = '') => process.stdout.write(line + '\n')
const int = (name, fallback) => (process.env[name]?.trim() ? Number(process.env[name]) : fallback)
const SECONDS = int('BENCH_SECONDS', 5)
const ROUNDS = int('BENCH_ROUNDS', 3)
const HOSTS = int('BENCH_FEED_HOSTS', 1_000_000)
const SOURCE = 'bench-feed'
const CONNECTIONS = 64

const tmp = mkdtempSync(join(os.tmpdir(), 'link-bench-feed-'))
let database
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }))

/** A hosts file of n hosts, as the big lists publish them (none of them the links' host). */
function writeFeed(n) {
  const path = join(tmp, 'feed.txt')
  const lines = ['# bench feed', '127.0.0.1 localhost']
  for (let i = 0; i < n; i++) lines.push(`0.0.0.0 h${i.toString(36)}.phish-${i % 997}.example`)
  writeFileSync(path, lines.join('\n') + '\n')
  return path
}

function cli(args) {
  const t0 = performance.now()
  const out = execFileSync(process.execPath, [join(ROOT, 'dist', 'cli.js'), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...database.serviceEnv },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return { out, seconds: (performance.now() - t0) / 1000 }
}

const hot = (file, round) => ['redirect', file, String((round * 137) % 1000), '0']

async function measure(label, round, file, results) {
  const services = { cached: {}, uncached: { CACHE_MAX_BYTES: '0' } }
  for (const [name, env] of Object.entries(services)) {
    const svc = await start(`${name}-${label}-${round}`, { kind: 'service', env: { ACCESS_LOG: 'api', ...env } }, { tmp, database })
    try {
      await runWrk({ url: svc.url, connections: CONNECTIONS, seconds: 2, args: hot(file, round + 5) }) // warm-up
      const r = await runWrk({ url: svc.url, connections: CONNECTIONS, seconds: SECONDS, args: hot(file, round) })
      if (r.status_errors) throw new Error(`${r.status_errors} answers were not 302: the feed blocks a link's host?`)
      ;(results[`${name} ${label}`] ??= []).push(r)
      say(`  round ${round + 1}: ${name} redirect, ${label}: ${Math.round(r.rps).toLocaleString('en-US')} req/s, p99 ${(r.p99_us / 1000).toFixed(2)} ms`)
    } finally {
      await stop(svc, say)
    }
  }
}

async function main() {
  say(`bench:blocklist: a ${HOSTS.toLocaleString('en-US')}-host feed, ${SECONDS} s per point, ${ROUNDS} round(s), ${CONNECTIONS} connections`)
  database = await prepareDatabase({ env: process.env, dataDir: join(tmp, 'data'), say })
  await stop(await start('migrate', { kind: 'service', env: {} }, { tmp, database }), say)
  const db = await database.open()
  const small = await seedSmall(db, { owners: 20, creators: 1, doomed: 1, passwordHash: 'unused' })
  // Seeded links carry no host domains: give them theirs, so the block-list test has work to do.
  await db.query(`update links set host_domains = domains_of('www.example.org')`)
  await db.close()
  const links = join(tmp, 'links.tsv')
  writeFileSync(links, small.links.map((i) => codeFor(i) + '\n').join(''))
  const feed = writeFeed(HOSTS)
  say(`feed: ${feed} (${HOSTS.toLocaleString('en-US')} hosts)`)

  const results = {}
  const loads = []
  for (let round = 0; round < ROUNDS; round++) {
    await measure('without the feed', round, links, results)
    const load = cli(['block', 'import', feed, '--source', SOURCE])
    loads.push(load.seconds)
    say(`  round ${round + 1}: block import: ${load.seconds.toFixed(1)} s (${load.out.split('\n')[0]})`)
    await measure('with the feed', round, links, results)
    cli(['block', 'remove', '--source', SOURCE])
  }
  say('\n| Figure | Median | Rounds |')
  say('|---|---|---|')
  say(`| ${HOSTS.toLocaleString('en-US')}-host feed: \`block import\` (read, parse, load) | ${median(loads).toFixed(1)} s | ${loads.map((s) => s.toFixed(1)).join(', ')} |`)
  for (const [key, rs] of Object.entries(results)) {
    say(`| redirect, ${key} | ${Math.round(median(rs.map((r) => r.rps))).toLocaleString('en-US')} req/s | ${rs.map((r) => Math.round(r.rps).toLocaleString('en-US')).join(', ')} |`)
  }
  say(`\ndatabase: ${database.describe}; machine: ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`)
}

try {
  await main()
} catch (err) {
  say(`bench failed: ${err instanceof Error ? err.stack : String(err)}`)
  process.exitCode = 1
} finally {
  await stopAll()
  await database?.cleanup().catch(() => {})
}
