// What a new client address costs the in-memory limiters when their tables are full and nothing in
// them is idle (a flood of distinct addresses): the rate limiter (MemoryLimiter, 100,000 keys), the
// leaky buckets (MemoryLeakyBuckets, 100,000) and the KDF line's recent clients (65,536). Medians of
// 5 runs of 2,000 new keys each, 0.5 ms apart on a fake clock.
//   npm run build && node scripts/bench/address-floods.mjs [dist folder=dist]
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { median, ROOT } from './lib.mjs'

const dist = resolve(process.argv[2] ?? join(ROOT, 'dist'))
const load = (path) => import(pathToFileURL(join(dist, path)).href)
const { MemoryLimiter } = await load('ratelimit/limiter.js')
const { MemoryLeakyBuckets } = await load('ratelimit/leaky.js')
const { RecentClients } = await load('passwords/recent-clients.js')

const KEYS = 2_000
const tables = [
  { name: 'rate limiter', make: (now) => new MemoryLimiter(now), full: 100_000, add: (t, k) => t.take(k) },
  { name: 'leaky buckets', make: (now) => new MemoryLeakyBuckets(now), full: 100_000, add: (t, k) => t.add(k, 10, 0.001) },
  { name: 'recent clients', make: (now) => new RecentClients(3_600_000, now), full: 65_536, add: (t, k) => t.note(k) },
]
for (const { name, make, full, add } of tables) {
  const runs = []
  for (let run = 0; run < 5; run++) {
    let t = 0
    const table = make(() => t)
    for (let i = 0; i < full; i++) add(table, `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`)
    const started = performance.now()
    for (let i = 0; i < KEYS; i++) {
      t += 0.5
      add(table, `fd00::${run}:${i.toString(16)}`)
    }
    runs.push(((performance.now() - started) * 1000) / KEYS)
    table.close?.()
  }
  console.log(`${name}: ${median(runs).toFixed(1)} µs per new address at the cap of ${full.toLocaleString('en')}`)
}
