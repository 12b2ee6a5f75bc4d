// The login ceiling for `npm run bench`: argon2id with the service's parameters on the service's
// own KDF pool (the same worker threads, as many as the service runs), with CONCURRENCY
// derivations always in flight for SECONDS. No HTTP, no database.
//   node scripts/bench/argon2.mjs MEMORY_KIB ITERATIONS THREADS CONCURRENCY SECONDS
// Prints one line: BENCH_JSON {...} in the shape bench.lua's done() prints.
import { randomBytes } from 'node:crypto'
import { KdfPool } from '../../dist/passwords/kdf-pool.js'

const [memoryKiB, iterations, threads, concurrency, seconds] = process.argv.slice(2).map(Number)
const pool = new KdfPool(threads)
const salt = randomBytes(16)
const latencies = []
const started = performance.now()
const deadline = started + seconds * 1000

async function loop() {
  while (performance.now() < deadline) {
    const t0 = performance.now()
    await pool.run({ alg: 'argon2id', password: 'bench-password-1', salt, memoryKiB, iterations, dkLen: 32 }, { keys: {} })
    latencies.push((performance.now() - t0) * 1000)
  }
}

await Promise.all(Array.from({ length: concurrency }, loop))
const duration = performance.now() - started
await pool.close()
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
