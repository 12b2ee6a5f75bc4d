// Measures the password KDF: the time of one argon2id hash at the configured cost (on a KDF worker
// thread), and the event-loop delay of a running service while 20 logins run concurrently (they
// must not block it: the hashes run on worker threads).
// Usage: npm run build && node scripts/kdf-storm.mjs   (ARGON2_MEMORY_KIB, ARGON2_ITERATIONS and
// KDF_THREADS to try other settings; DATABASE_URL for PostgreSQL)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { loadConfig } from '../dist/config.js'
import { createLogger } from '../dist/log.js'
import { Passwords } from '../dist/passwords/passwords.js'
import { startService } from '../dist/service.js'

const CONCURRENT = 20
const ROUNDS = 5
const dataDir = mkdtempSync(join(tmpdir(), 'kdf-storm-'))
const config = loadConfig({ ...process.env, PORT: '0', DATA_DIR: dataDir, TRUST_PROXY: '127.0.0.1', ACCESS_LOG: 'off', DATABASE_URL: process.env.DATABASE_URL })
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = (ns) => (ns / 1e6).toFixed(2)

const hasher = new Passwords(config.argon2, 1)
const hashTimes = []
for (let i = 0; i < 5; i++) {
  const t = performance.now()
  await hasher.hash('correct horse battery')
  hashTimes.push(performance.now() - t)
}
await hasher.close()

const service = await startService(config, createLogger('error'), resolve('sql'), resolve('dist/app'))
const post = (path, body, ip) =>
  fetch(service.url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': ip }, body: JSON.stringify(body) })
const user = { username: `storm${process.pid}`, password: 'correct horse battery', display_name: 'Storm' }
await (await post('/api/v1/users', user, '10.9.9.9')).text()

const idle = monitorEventLoopDelay({ resolution: 1 })
idle.enable()
await new Promise((r) => setTimeout(r, 1000))
idle.disable()

const storm = monitorEventLoopDelay({ resolution: 1 })
const walls = []
let ok = 0
storm.enable()
for (let round = 0; round < ROUNDS; round++) {
  const t = performance.now()
  const statuses = await Promise.all(
    Array.from({ length: CONCURRENT }, async (_, i) => {
      const res = await post('/api/v1/auth/login', { username: user.username, password: user.password }, `10.8.${round}.${i}`)
      await res.text()
      return res.status
    }),
  )
  ok += statuses.filter((s) => s === 200).length
  walls.push(performance.now() - t)
}
storm.disable()
await service.close()
rmSync(dataDir, { recursive: true, force: true })

console.log(`argon2id m=${config.argon2.memoryKiB} KiB t=${config.argon2.iterations} p=1, ${config.kdfThreads} KDF threads`)
console.log(`one hash: median ${median(hashTimes).toFixed(1)} ms (of 5: ${hashTimes.map((t) => t.toFixed(1)).join(', ')})`)
console.log(`event-loop delay idle:  p50 ${ms(idle.percentile(50))} ms, p99 ${ms(idle.percentile(99))} ms, max ${ms(idle.max)} ms`)
console.log(`event-loop delay during ${ROUNDS} storms of ${CONCURRENT} concurrent logins (${ok}/${ROUNDS * CONCURRENT} succeeded): p50 ${ms(storm.percentile(50))} ms, p99 ${ms(storm.percentile(99))} ms, max ${ms(storm.max)} ms`)
console.log(`storm wall time: median ${median(walls).toFixed(0)} ms per ${CONCURRENT} logins`)
