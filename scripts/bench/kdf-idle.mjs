// What a login pays after the KDF threads stopped for a quiet minute (KDF_IDLE_MS): one password
// check at the service's default cost on a pool whose thread must start first, against one on a
// pool whose thread runs, alternating; medians. Also the RSS the threads hold, and give back.
// Needs dist/ (npm run build).   node scripts/bench/kdf-idle.mjs [rounds, 9]
import { readFileSync } from 'node:fs'
import { loadConfig } from '../../dist/config.js'
import { Passwords } from '../../dist/passwords/passwords.js'
import { median, sleep } from './lib.mjs'

const ROUNDS = Number(process.argv[2] ?? 9)
const { argon2, kdfThreads } = loadConfig({})
const rssMB = () => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024
const timed = async (passwords) => {
  const t = performance.now()
  await passwords.verify('a password', undefined)
  return performance.now() - t
}

const cold = []
const warm = []
const warmPool = new Passwords(argon2, 1)
await timed(warmPool)
for (let round = 0; round < ROUNDS; round++) {
  const fresh = new Passwords(argon2, 1)
  cold.push(await timed(fresh))
  await fresh.close()
  warm.push(await timed(warmPool))
}
await warmPool.close()

// The memory: no thread, then KDF_THREADS threads after a hash each, then after they stop.
await sleep(500)
const before = rssMB()
const pool = new Passwords(argon2, kdfThreads, 1_000)
await Promise.all(Array.from({ length: kdfThreads }, () => pool.verify('a password', undefined)))
const busy = rssMB()
await sleep(2_500)
const after = rssMB()
await pool.close()

const ms = (v) => `${median(v).toFixed(0)} ms`
console.log(`Node ${process.version}, argon2id m=${argon2.memoryKiB} KiB t=${argon2.iterations}, ${ROUNDS} rounds, medians`)
console.log(`| first check after idle (the thread starts) | ${ms(cold)} | running thread | ${ms(warm)} | the start costs ${(median(cold) - median(warm)).toFixed(0)} ms |`)
console.log(`| RSS: no thread ${before.toFixed(0)} MB | ${kdfThreads} threads after a hash each ${busy.toFixed(0)} MB | stopped after idle ${after.toFixed(0)} MB |`)
