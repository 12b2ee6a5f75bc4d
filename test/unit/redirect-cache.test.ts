// The redirect cache (src/links/redirect-cache.ts): a byte budget with CLOCK eviction, short-lived
// "unknown" entries, invalidation, the epoch guard against a stale fill, and the off switch.
// Contract §4: redirects use a new url at once; a deleted code answers 404 (so a cache must never
// serve a stale Location).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DISABLED, EXHAUSTED, EXPIRED, MISSING, NO_EXPIRY } from '../../src/links/link-state.js'
import { Guarded, RECENT_WRITES, RedirectCache } from '../../src/links/redirect-cache.js'

/** A cache on a fake clock; `at(ms)` moves the clock. */
function fakeCache(maxBytes: number, negativeMs = 5_000): { cache: RedirectCache; at(ms: number): void } {
  let now = 0
  const cache = new RedirectCache(maxBytes, negativeMs, () => now)
  return { cache, at: (ms) => void (now = ms) }
}

/** A Location of exactly n characters. */
const loc = (n: number, fill = 'a') => ('https://e.com/' + fill.repeat(n)).slice(0, n)

/** What one entry with an n-character Location costs, measured on a fresh cache. */
function costOf(n: number): number {
  const { cache } = fakeCache(1 << 20)
  cache.set('probe', loc(n), cache.epoch)
  return cache.bytes
}

// ---------------------------------------------------------------------------------------------

const budget = suite('redirect cache: byte budget and LRU')

budget('stores a Location and returns it', () => {
  const { cache } = fakeCache(1 << 20)
  assert.is(cache.get('aZ3kP9qR'), undefined)
  cache.set('aZ3kP9qR', 'https://example.com/a', cache.epoch)
  assert.is(cache.get('aZ3kP9qR'), 'https://example.com/a')
  assert.is(cache.size, 1)
  assert.ok(cache.bytes > 'https://example.com/a'.length, 'an entry costs its Location and some overhead')
})

budget('an entry costs more for a longer Location, one byte per character', () => {
  assert.is(costOf(140) - costOf(40), 100)
})

budget('evicts the least recently stored entry when the budget is full', () => {
  const cost = costOf(40)
  const { cache } = fakeCache(3 * cost)
  for (const code of ['a', 'b', 'c']) cache.set(code, loc(40, code), cache.epoch)
  assert.is(cache.size, 3)
  assert.is(cache.bytes, 3 * cost)
  cache.set('d', loc(40, 'd'), cache.epoch)
  assert.is(cache.size, 3)
  assert.is(cache.get('a'), undefined)
  assert.is(cache.get('b'), loc(40, 'b'))
  assert.is(cache.get('d'), loc(40, 'd'))
})

budget('a read makes an entry most recent, so the least recently used goes first', () => {
  const cost = costOf(40)
  const { cache } = fakeCache(3 * cost)
  for (const code of ['a', 'b', 'c']) cache.set(code, loc(40, code), cache.epoch)
  assert.is(cache.get('a'), loc(40, 'a')) // now b is the least recently used
  cache.set('d', loc(40, 'd'), cache.epoch)
  assert.is(cache.get('b'), undefined)
  assert.is(cache.get('a'), loc(40, 'a'))
  assert.is(cache.get('c'), loc(40, 'c'))
  assert.is(cache.get('d'), loc(40, 'd'))
})

budget('a large entry evicts as many old ones as it needs', () => {
  const small = costOf(40)
  const { cache } = fakeCache(4 * small)
  for (const code of ['a', 'b', 'c', 'd']) cache.set(code, loc(40, code), cache.epoch)
  // costs two small entries' worth plus a little: three must go
  cache.set('big', loc(40 + small + 1), cache.epoch)
  assert.equal(['a', 'b', 'c', 'd'].map((c) => cache.get(c) !== undefined), [false, false, false, true])
  assert.is(cache.get('big'), loc(40 + small + 1))
  assert.ok(cache.bytes <= cache.maxBytes)
})

budget('never holds more bytes than its budget, whatever is stored', () => {
  const { cache } = fakeCache(5_000)
  for (let i = 0; i < 2_000; i++) {
    cache.set(`c${i}`, i % 7 === 0 ? undefined : loc(20 + ((i * 37) % 500)), cache.epoch)
    assert.ok(cache.bytes <= 5_000, `bytes ${cache.bytes} after ${i + 1} sets`)
  }
  assert.ok(cache.size > 0)
})

budget('under any mix of stores, reads and invalidations a code answers its last stored Location or nothing, within the budget', () => {
  const { cache } = fakeCache(20 * costOf(40))
  const last = new Map<string, string>()
  let seed = 7
  const random = (n: number) => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0), (seed >>> 8) % n)
  for (let i = 0; i < 20_000; i++) {
    const code = `c${random(120)}`
    const op = random(10)
    if (op < 5) {
      const location = loc(30 + random(40), String.fromCharCode(97 + random(26)))
      cache.set(code, location, cache.epoch)
      last.set(code, location)
    } else if (op < 9) {
      const got = cache.get(code)
      if (got !== undefined) assert.is(got, last.get(code), `${code} after ${i} operations`)
    } else {
      cache.invalidate(code)
      last.delete(code)
    }
    assert.ok(cache.bytes <= cache.maxBytes)
  }
  assert.ok(cache.evictions > 1_000, `the clock went round many times: ${cache.evictions} evictions`)
  let held = 0
  for (const code of last.keys()) if (cache.get(code) !== undefined) held++
  assert.is(held, cache.size, 'every entry the cache counts is one it answers')
})

budget('an entry bigger than the whole budget is not stored and evicts nothing', () => {
  const cost = costOf(40)
  const { cache } = fakeCache(2 * cost)
  cache.set('a', loc(40), cache.epoch)
  cache.set('huge', loc(3 * cost), cache.epoch)
  assert.is(cache.get('huge'), undefined)
  assert.is(cache.get('a'), loc(40))
  assert.is(cache.bytes, cost)
})

budget('storing a code again replaces its entry and its cost', () => {
  const { cache } = fakeCache(1 << 20)
  cache.set('a', loc(40), cache.epoch)
  cache.set('a', loc(140), cache.epoch)
  assert.is(cache.size, 1)
  assert.is(cache.get('a'), loc(140))
  assert.is(cache.bytes, costOf(140))
})

budget('a budget of 0 stores nothing', () => {
  const { cache } = fakeCache(0)
  cache.set('a', loc(40), cache.epoch)
  cache.set('b', undefined, cache.epoch)
  assert.is(cache.size, 0)
  assert.is(cache.get('a'), undefined)
  assert.is(cache.get('b'), undefined)
})

budget.run()

// ---------------------------------------------------------------------------------------------

const negative = suite('redirect cache: unknown codes')

// An unknown code is remembered as unknown only for negativeMs, so a code created elsewhere shows up.
negative('an unknown code is MISSING until negativeMs has passed, then forgotten', () => {
  const { cache, at } = fakeCache(1 << 20, 5_000)
  cache.set('nope0000', undefined, cache.epoch)
  assert.is(cache.get('nope0000'), MISSING)
  at(4_999)
  assert.is(cache.get('nope0000'), MISSING)
  at(5_000)
  assert.is(cache.get('nope0000'), undefined)
  assert.is(cache.size, 0)
  assert.is(cache.bytes, 0)
})

negative('MISSING is distinct from "not cached"', () => {
  assert.is(MISSING, null)
  const { cache } = fakeCache(1 << 20)
  assert.is(cache.get('x'), undefined)
})

negative('with negativeMs 0 unknown codes are not remembered at all', () => {
  const { cache } = fakeCache(1 << 20, 0)
  cache.set('nope0000', undefined, cache.epoch)
  assert.is(cache.size, 0)
  assert.is(cache.get('nope0000'), undefined)
})

negative('storing a Location over an unknown entry replaces it', () => {
  const { cache } = fakeCache(1 << 20)
  cache.set('code0000', undefined, cache.epoch)
  cache.set('code0000', 'https://e.com/', cache.epoch)
  assert.is(cache.get('code0000'), 'https://e.com/')
  assert.is(cache.size, 1)
})

negative.run()

// ---------------------------------------------------------------------------------------------

const writes = suite('redirect cache: invalidation and the epoch guard')

// contract §4: PATCH → redirects use the new url at once; DELETE → the code answers 404
writes('invalidate forgets a Location and an unknown entry, and frees their bytes', () => {
  const { cache } = fakeCache(1 << 20)
  cache.set('a', loc(40), cache.epoch)
  cache.set('b', undefined, cache.epoch)
  cache.invalidate('a')
  cache.invalidate('b')
  assert.is(cache.get('a'), undefined)
  assert.is(cache.get('b'), undefined)
  assert.is(cache.size, 0)
  assert.is(cache.bytes, 0)
})

writes('invalidating a code that is not cached is harmless and still bumps the epoch', () => {
  const { cache } = fakeCache(1 << 20)
  cache.set('a', loc(40), cache.epoch)
  const before = cache.epoch
  cache.invalidate('zzz')
  assert.ok(cache.epoch !== before)
  assert.is(cache.get('a'), loc(40))
})

// The stale-fill race: a redirect reads the old url, a PATCH writes and invalidates, then the
// redirect stores what it read. The epoch taken before the read makes that store a no-op.
writes('a fill that raced a write is not stored', () => {
  const { cache } = fakeCache(1 << 20)
  const epoch = cache.epoch // the redirect takes the epoch, then reads the database...
  cache.invalidate('code0000') // ...meanwhile a PATCH commits and invalidates
  cache.set('code0000', 'https://old.example/', epoch) // the redirect stores what it read
  assert.is(cache.get('code0000'), undefined)
  assert.is(cache.size, 0)
  // the next read, with the current epoch, may store
  cache.set('code0000', 'https://new.example/', cache.epoch)
  assert.is(cache.get('code0000'), 'https://new.example/')
})

writes('a stale fill of an unknown code (a create raced it) is not stored either', () => {
  const { cache } = fakeCache(1 << 20)
  const epoch = cache.epoch
  cache.invalidate('code0000') // POST created it
  cache.set('code0000', undefined, epoch)
  assert.is(cache.get('code0000'), undefined)
})

// A write (a link created, changed or deleted anywhere) kept every read in flight out of the
// cache: under steady creating, cold codes were read again and again.
writes('a write to another code does not refuse a fill: only a write to its own code does', () => {
  const { cache } = fakeCache(1 << 20)
  const epoch = cache.epoch
  cache.invalidate('other000')
  cache.invalidate('other001')
  cache.set('code0000', 'https://e.com/', epoch)
  assert.is(cache.get('code0000'), 'https://e.com/')
  const again = cache.epoch
  cache.invalidate('code0001')
  cache.invalidate('other000')
  cache.set('code0001', 'https://old.example/', again)
  assert.is(cache.get('code0001'), undefined)
})

writes('a read that outlasts the writes the cache remembers is refused its fill, its own code written or not', () => {
  const { cache } = fakeCache(1 << 20)
  const early = cache.epoch
  cache.invalidate('code0000') // this code's write: forgotten below, so only the floor can refuse
  for (let i = 0; i < 2 * RECENT_WRITES; i++) cache.invalidate(`other${i}`)
  const late = cache.epoch
  cache.invalidate('zzz')
  cache.set('code0000', 'https://old.example/', early)
  cache.set('code0001', 'https://old.example/', early)
  assert.is(cache.get('code0000'), undefined)
  assert.is(cache.get('code0001'), undefined)
  cache.set('code0002', 'https://e.com/', late) // began within what is remembered
  assert.is(cache.get('code0002'), 'https://e.com/')
})

writes('a code written a generation ago still refuses a fill read before that write', () => {
  const { cache } = fakeCache(1 << 20)
  for (let i = 0; i < RECENT_WRITES - 1; i++) cache.invalidate(`other${i}`)
  const epoch = cache.epoch
  cache.invalidate('code0000') // the newer generation's last write...
  for (let i = 0; i < RECENT_WRITES - 1; i++) cache.invalidate(`more${i}`) // ...now in the older one
  cache.set('code0000', 'https://old.example/', epoch)
  assert.is(cache.get('code0000'), undefined)
  cache.set('code0001', 'https://e.com/', epoch)
  assert.is(cache.get('code0001'), 'https://e.com/')
})

writes('clear empties the cache and refuses fills begun before it', () => {
  const { cache } = fakeCache(1 << 20)
  cache.set('a', loc(40), cache.epoch)
  const epoch = cache.epoch
  cache.clear()
  assert.is(cache.size, 0)
  assert.is(cache.bytes, 0)
  cache.set('b', loc(40), epoch)
  assert.is(cache.get('b'), undefined)
  // later generations of writes do not take the clear's refusal back
  for (let i = 0; i < 2 * RECENT_WRITES; i++) cache.invalidate(`other${i}`)
  cache.set('b', loc(40), epoch)
  assert.is(cache.get('b'), undefined)
})

writes.run()

// ---------------------------------------------------------------------------------------------

const enabled = suite('redirect cache: setEnabled')

// change-feed.ts: while the change feed is down the cache is off and empty, so nothing can go stale
enabled('setEnabled(false) empties the cache and stores nothing, Locations or unknowns', () => {
  const { cache } = fakeCache(1 << 20)
  cache.set('a', loc(40), cache.epoch)
  cache.set('b', undefined, cache.epoch)
  cache.setEnabled(false)
  assert.is(cache.size, 0)
  assert.is(cache.bytes, 0)
  cache.set('a', loc(40), cache.epoch)
  cache.set('c', undefined, cache.epoch)
  assert.is(cache.get('a'), undefined)
  assert.is(cache.get('c'), undefined)
  assert.is(cache.size, 0)
})

enabled('setEnabled(true) starts again from empty and stores again', () => {
  const { cache } = fakeCache(1 << 20)
  cache.setEnabled(false)
  const before = cache.epoch
  cache.setEnabled(true)
  // a fill begun while disabled must not land after re-enabling
  cache.set('a', loc(40), before)
  assert.is(cache.get('a'), undefined)
  cache.set('a', loc(40), cache.epoch)
  assert.is(cache.get('a'), loc(40))
})

enabled.run()

// ---------------------------------------------------------------------------------------------

const stopped = suite('redirect cache: links an operator disabled (issue 12)')

stopped('a disabled code is DISABLED until invalidated, past negativeMs and past its expiry', () => {
  let wall = 1_000
  let now = 0
  const cache = new RedirectCache(1 << 20, 5_000, () => now, () => wall)
  cache.set('off00000', DISABLED, cache.epoch, 2_000)
  assert.is(cache.get('off00000'), DISABLED)
  now = 60_000
  wall = 3_000
  assert.is(cache.get('off00000'), DISABLED, 'not a short-lived negative entry, and disabled comes before expired')
  cache.invalidate('off00000')
  assert.is(cache.get('off00000'), undefined)
  assert.is(cache.bytes, 0)
})

stopped('DISABLED is neither MISSING nor EXPIRED, and costs what an unknown code costs', () => {
  const { cache } = fakeCache(1 << 20)
  cache.set('off00000', DISABLED, cache.epoch)
  cache.set('nope0000', undefined, cache.epoch)
  assert.is.not(cache.get('off00000'), MISSING)
  assert.is.not(cache.get('off00000'), EXPIRED)
  cache.clear()
  cache.set('nope0000', undefined, cache.epoch)
  const unknown = cache.bytes
  cache.set('off00000', DISABLED, cache.epoch)
  assert.is(cache.bytes, 2 * unknown)
})

stopped.run()

const resumed = suite('redirect cache: after the change feed is back')

resumed('held entries are not answered after resume, only as the fallback of a failed read, until a read replaces them', () => {
  const cache = new RedirectCache(10_000, 0)
  cache.set('aaaaaaaa', 'https://a.example/', cache.epoch)
  cache.hold(60_000)
  assert.is(cache.get('aaaaaaaa'), 'https://a.example/', 'served while the feed is down')
  cache.resume()
  assert.is(cache.get('aaaaaaaa'), undefined, 'after the feed is back: read again first')
  assert.is(cache.stale('aaaaaaaa'), 'https://a.example/', 'the fallback of a failed read')
  cache.set('aaaaaaaa', 'https://b.example/', cache.epoch)
  assert.is(cache.get('aaaaaaaa'), 'https://b.example/')
  assert.is(cache.stale('aaaaaaaa'), undefined, 'fresh: no fallback needed')
  cache.setEnabled(false)
})

resumed('without a hold in effect, resume starts from empty', () => {
  const cache = new RedirectCache(10_000, 0)
  cache.setEnabled(false)
  cache.resume()
  cache.set('aaaaaaaa', 'https://a.example/', cache.epoch)
  assert.is(cache.get('aaaaaaaa'), 'https://a.example/')
})

resumed.run()

// ---------------------------------------------------------------------------------------------

const limits = suite('redirect cache: starts and caps (issue 25)')

limits('before its start an entry answers MISSING, from its start the Location, by the wall clock', () => {
  let wall = 1_000
  const cache = new RedirectCache(1 << 20, 5_000, () => 0, () => wall)
  cache.set('later000', 'https://e.com/', cache.epoch, NO_EXPIRY, 2_000)
  assert.is(cache.get('later000'), MISSING)
  wall = 2_000
  assert.is(cache.get('later000'), 'https://e.com/')
  wall = 1_999
  assert.is(cache.get('later000'), MISSING, 'the same entry: no read was needed to start it')
})

limits('a capped link is kept as one Guarded object, returned as stored; EXHAUSTED is its own answer', () => {
  const { cache } = fakeCache(1 << 20)
  const capped = new Guarded('https://e.com/c', true, false)
  cache.set('capped00', capped, cache.epoch)
  assert.is(cache.get('capped00'), capped)
  assert.ok(cache.bytes > costOf('https://e.com/c'.length), 'costs its Location and the object')
  cache.set('capped00', EXHAUSTED, cache.epoch)
  const answer = cache.get('capped00')
  assert.is(answer, EXHAUSTED)
  for (const other of [MISSING, EXPIRED, DISABLED]) assert.is.not(answer, other)
})

limits.run()
