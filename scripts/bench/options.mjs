// `npm run bench` options (environment) and the fixed sizes of its points.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT } from './lib.mjs'

function intOption(name, fallback, lo, hi) {
  const raw = process.env[name]?.trim()
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!/^\d+$/.test(raw) || n < lo || n > hi) {
    process.stderr.write(`${name} must be an integer from ${lo} to ${hi}\n`)
    process.exit(2)
  }
  return n
}

const { loadConfig } = await import(pathToFileURL(join(ROOT, 'dist', 'config.js')).href)
/** The service's own defaults, read from the build it measures. */
export const DEFAULTS = loadConfig({})

export const SECONDS = intOption('BENCH_SECONDS', 10, 1, 15)
export const ROUNDS = intOption('BENCH_ROUNDS', 3, 1, 9)
export const LARGE = process.env.BENCH_LARGE === '1'
export const KEEP = process.env.BENCH_KEEP === '1'
export const WARM_SECONDS = Math.min(3, SECONDS)
export const DEV_RUN = SECONDS < 10 || ROUNDS < 3
// Only the login points (the KDF ceiling, logins, the storm and the burst): a quick look at the
// password path; the table is printed and docs/performance.md is left alone.
export const LOGINS_ONLY = process.env.BENCH_ONLY === 'logins'
// Only the visit statistics' points (browser-like redirects, VISIT_STATS on and off in each round).
export const STATS_ONLY = process.env.BENCH_ONLY === 'stats'
// Only the link limits' points (a capped link and a plain one in each round).
export const LIMITS_ONLY = process.env.BENCH_ONLY === 'limits'
// Only the redirect rules' points (a link with 3 rules, none matching, and a plain one in each round).
export const RULES_ONLY = process.env.BENCH_ONLY === 'rules'
if (process.env.BENCH_ONLY !== undefined && !LOGINS_ONLY && !STATS_ONLY && !LIMITS_ONLY && !RULES_ONLY) {
  process.stderr.write('BENCH_ONLY may only be "logins", "stats", "limits" or "rules"\n')
  process.exit(2)
}
// The password hash as it ships: argon2id at the service's default cost, on its default threads.
export const ARGON2 = {
  memoryKiB: intOption('BENCH_ARGON2_MEMORY_KIB', DEFAULTS.argon2.memoryKiB, 8, 1_048_576),
  iterations: intOption('BENCH_ARGON2_ITERATIONS', DEFAULTS.argon2.iterations, 1, 64),
}
export const KDF_THREADS = DEFAULTS.kdfThreads
// The service as it ships: ACCESS_LOG at its default (a line per request) unless a point says otherwise.
export const ACCESS_LOG = process.env.BENCH_ACCESS_LOG?.trim() || DEFAULTS.accessLog

export const C_THROUGHPUT = 64 // connections for throughput points
export const C_LIGHT = 8 // connections for latency points
export const C_API = 16 // create, list, patch and delete
export const C_LOGIN = 8 // login: twice the libuv pool, so the pool never idles
export const STORM = 20 // concurrent logins in the storm
export const BURST = 60 // simultaneous logins from as many addresses, half of them unknown usernames
export const OWNERS = 20 // x 50 links = the 1k set
export const LARGE_TOTAL = 1_000_000
export const SMALL_CACHE_BYTES = 1024 * 1024 // for the 1M set: holds a small fraction of it
export const PASSWORD = 'bench-password-1'
// Enough accounts that a create-link point never meets the 50-links cap, and enough links that a
// delete point never runs out (at 8,000 and 4,000 a second, every round and the warm-up), for the
// service and for its ceiling each.
export const CREATORS = Math.ceil((8_000 * SECONDS * (ROUNDS + 1)) / 50)
export const DOOMED = Math.ceil((4_000 * SECONDS * (ROUNDS + 1)) / 50)
