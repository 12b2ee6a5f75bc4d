// Issue 13: sessions checked lately are trusted for at most SESSION_CACHE_MS, never past their
// expiry, never after a revocation, and not at all while the change feed is down.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { keyOf, SessionCache } from '../../src/auth/session-cache.js'

const session = (userId: string, byte = 1) => ({ tokenHash: Buffer.alloc(32, byte), userId })

function clocked(ttlMs = 1_000, maxEntries = 100) {
  let now = 0
  const cache = new SessionCache(ttlMs, maxEntries, () => now)
  return { cache, advance: (ms: number) => (now += ms) }
}

test('an entry lives SESSION_CACHE_MS, or less when the session expires sooner', () => {
  const { cache, advance } = clocked(1_000)
  const a = session('u1', 1)
  const b = session('u2', 2)
  cache.set(keyOf(a.tokenHash), a, cache.epoch, 60_000)
  cache.set(keyOf(b.tokenHash), b, cache.epoch, 300) // expires in 300 ms by the database clock
  assert.equal(cache.get(keyOf(a.tokenHash)), a)
  advance(301)
  assert.is(cache.get(keyOf(b.tokenHash)), undefined, 'past its expiry')
  assert.equal(cache.get(keyOf(a.tokenHash)), a)
  advance(700)
  assert.is(cache.get(keyOf(a.tokenHash)), undefined, 'past the ttl')
})

test('a read that raced a revocation is not stored', () => {
  const { cache } = clocked()
  const a = session('u1')
  const epoch = cache.epoch
  cache.forgetUser('someone else') // any revocation between the read and the set
  cache.set(keyOf(a.tokenHash), a, epoch, 60_000)
  assert.is(cache.get(keyOf(a.tokenHash)), undefined)
})

test("forgetUser drops every cached session of that user and no one else's", () => {
  const { cache } = clocked()
  const [a1, a2, b] = [session('a', 1), session('a', 2), session('b', 3)]
  for (const s of [a1, a2, b]) cache.set(keyOf(s.tokenHash), s, cache.epoch, 60_000)
  cache.forgetUser('a')
  assert.is(cache.get(keyOf(a1.tokenHash)), undefined)
  assert.is(cache.get(keyOf(a2.tokenHash)), undefined)
  assert.equal(cache.get(keyOf(b.tokenHash)), b)
  assert.is(cache.size, 1)
})

test('disabled (the change feed is down), nothing is stored and what was is gone', () => {
  const { cache } = clocked()
  const a = session('u1')
  cache.set(keyOf(a.tokenHash), a, cache.epoch, 60_000)
  cache.setEnabled(false)
  assert.is(cache.get(keyOf(a.tokenHash)), undefined)
  cache.set(keyOf(a.tokenHash), a, cache.epoch, 60_000)
  assert.is(cache.get(keyOf(a.tokenHash)), undefined)
  cache.setEnabled(true)
  cache.set(keyOf(a.tokenHash), a, cache.epoch, 60_000)
  assert.equal(cache.get(keyOf(a.tokenHash)), a)
})

test('SESSION_CACHE_MS=0 caches nothing; a full cache starts again rather than grow', () => {
  const off = new SessionCache(0)
  const a = session('u1')
  off.set(keyOf(a.tokenHash), a, off.epoch, 60_000)
  assert.is(off.get(keyOf(a.tokenHash)), undefined)
  const { cache } = clocked(1_000, 2)
  for (let i = 1; i <= 3; i++) {
    const s = session(`u${i}`, i)
    cache.set(keyOf(s.tokenHash), s, cache.epoch, 60_000)
  }
  assert.is(cache.size, 1)
})

test.run()
