// What a miss costs when every key is new, in the two structures that then drop one: the memos
// (dist/stats/memo.js: User-Agent → families, address → country, a rule's device; every key new
// as when a campaign forges a User-Agent per visit), against a plain Map that forgets everything
// at its size; and the redirect cache (dist/links/redirect-cache.js) full at each size, a look-up
// and a store per new code, as on a cold walk over more links than it holds. Prints medians of 5.
//   npm run build && node scripts/bench/misses.mjs
import { RedirectCache } from '../../dist/links/redirect-cache.js'
import { Memo } from '../../dist/stats/memo.js'
import { median } from './lib.mjs'

const keys = Array.from({ length: 200_000 }, (_, i) => `Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/126.0.${i}.0 Safari/537.36`)
const make = (k) => k.length
const perMiss = (fresh) => {
  const runs = []
  for (let r = 0; r < 5; r++) {
    const m = fresh()
    const start = performance.now()
    for (const k of keys) m.get(k, make)
    runs.push(((performance.now() - start) * 1000) / keys.length)
  }
  return median(runs)
}
class Forgetful {
  #map = new Map()
  constructor(max) {
    this.max = max
  }
  get(k, make) {
    let v = this.#map.get(k)
    if (v === undefined) {
      if (this.#map.size >= this.max) this.#map = new Map()
      this.#map.set(k, (v = make(k)))
    }
    return v
  }
}
for (const max of [1_000, 10_000]) {
  const memo = perMiss(() => new Memo(max))
  const plain = perMiss(() => new Forgetful(max))
  console.log(`${max.toLocaleString('en-US')} kept: Memo ${memo.toFixed(3)} µs a miss, a Map cleared when full ${plain.toFixed(3)} µs (${(memo / plain).toFixed(2)}×)`)
}

const codes = Array.from({ length: 400_000 }, (_, i) => `c${i.toString(36).padStart(7, '0')}`)
const location = 'https://www.example.org/articles/a-readable-slug?utm_source=bench'
for (const mib of [1, 8, 64]) {
  const runs = []
  let size = 0
  for (let r = 0; r < 5; r++) {
    const cache = new RedirectCache(mib * 2 ** 20, 1_000)
    let i = 0
    while (cache.evictions === 0) cache.set(codes[i++ % codes.length] + (i >= codes.length ? 'x' : ''), location, cache.epoch)
    size = cache.size
    const walk = codes.slice(0, 200_000).map((c) => `w${r}${c}`)
    const start = performance.now()
    for (const code of walk) {
      cache.get(code)
      cache.set(code, location, cache.epoch)
    }
    runs.push(((performance.now() - start) * 1000) / walk.length)
  }
  console.log(`redirect cache of ${mib} MiB (${size.toLocaleString('en-US')} entries), full: ${median(runs).toFixed(3)} µs a miss and its store`)
}
