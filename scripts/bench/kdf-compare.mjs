// The KDF choice for `npm run bench` (docs/decisions.md): the time of one password hash, median
// of 5 after one warm-up, for node:crypto scrypt at the previous release's cost (N = 2^16, r = 8)
// and at OWASP's scrypt floor (N = 2^17), and for @noble/hashes argon2id at the service's cost.
// Each runs alone on one thread (scrypt on libuv's pool, argon2id on this one: no server here).
//   node scripts/bench/kdf-compare.mjs MEMORY_KIB ITERATIONS
// Prints one line: BENCH_JSON {"scrypt16_us":...,"scrypt17_us":...,"argon2id_us":...}
import { randomBytes, scrypt } from 'node:crypto'
import { argon2id } from '@noble/hashes/argon2.js'

const [memoryKiB, iterations] = process.argv.slice(2).map(Number)
const salt = randomBytes(16)
const password = 'bench-password-1'

async function median5(fn) {
  await fn()
  const times = []
  for (let i = 0; i < 5; i++) {
    const t = performance.now()
    await fn()
    times.push((performance.now() - t) * 1000)
  }
  return Math.round(times.sort((a, b) => a - b)[2])
}

const scryptOnce = (log2N) => () =>
  new Promise((resolve, reject) =>
    scrypt(password, salt, 32, { N: 2 ** log2N, r: 8, p: 1, maxmem: 256 * 2 ** log2N * 8 }, (err) => (err ? reject(err) : resolve())),
  )
const r = {
  scrypt16_us: await median5(scryptOnce(16)),
  scrypt17_us: await median5(scryptOnce(17)),
  argon2id_us: await median5(async () => argon2id(password, salt, { m: memoryKiB, t: iterations, p: 1, dkLen: 32 })),
}
process.stdout.write(`BENCH_JSON ${JSON.stringify(r)}\n`)
