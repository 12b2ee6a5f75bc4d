// The login ceiling for `npm run bench`: raw scrypt with the service's parameters (N = 2^log2N,
// r = 8, p = 1, 32-byte key), on node:crypto's libuv thread pool as the service runs it, with
// CONCURRENCY derivations always in flight for SECONDS. No HTTP, no database.
//   node scripts/bench/scrypt.mjs LOG2N CONCURRENCY SECONDS
// Prints one line: BENCH_JSON {...} in the shape bench.lua's done() prints.
import { randomBytes, scrypt } from 'node:crypto'

const [log2N, concurrency, seconds] = process.argv.slice(2).map(Number)
const options = { N: 2 ** log2N, r: 8, p: 1, maxmem: 256 * 2 ** log2N * 8 }
const salt = randomBytes(16)
const latencies = []
const started = performance.now()
const deadline = started + seconds * 1000

function one() {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    scrypt('bench-password-1', salt, 32, options, (err) => {
      if (err) reject(err)
      else {
        latencies.push((performance.now() - t0) * 1000)
        resolve()
      }
    })
  })
}

async function loop() {
  while (performance.now() < deadline) await one()
}

await Promise.all(Array.from({ length: concurrency }, loop))
const duration = performance.now() - started
latencies.sort((a, b) => a - b)
const pct = (p) => Math.round(latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? 0)
const r = {
  requests: latencies.length,
  duration_us: Math.round(duration * 1000),
  bytes: 0,
  connect_errors: 0,
  read_errors: 0,
  write_errors: 0,
  status_errors: 0,
  timeouts: 0,
  p50_us: pct(50),
  p90_us: pct(90),
  p99_us: pct(99),
  p999_us: pct(99.9),
  max_us: Math.round(latencies.at(-1) ?? 0),
  mean_us: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length),
}
process.stdout.write(`BENCH_JSON ${JSON.stringify(r)}\n`)
