// The rate limit's pure parts (spec §8, contract §7): the token bucket with an injected clock,
// the per-IP MemoryLimiter with a fake clock, and the client address of a request.
import type { IncomingMessage } from 'node:http'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parseTrustProxy } from '../../src/config.js'
import { decide, RATE_CAPACITY, RATE_PER_SECOND, rateHeaders, TokenBucket } from '../../src/ratelimit/bucket.js'
import { clientIp } from '../../src/ratelimit/client-ip.js'
import { FULL_SWEEP_GAP_MS, MemoryLimiter } from '../../src/ratelimit/limiter.js'
import { countSweeps } from '../helpers/sweeps.js'

// ---------------------------------------------------------------------------------------------

const bucket = suite('TokenBucket')

// spec §8: sustained rate 5 requests per second, burst 5
bucket('the limit is a burst of 5 refilled at 5 per second', () => {
  assert.is(RATE_CAPACITY, 5)
  assert.is(RATE_PER_SECOND, 5)
})

// contract §7: capacity 5; X-RateLimit-Remaining = whole tokens left; a denied one has Retry-After ≥ 1
bucket('allows 5 takes at one instant, counting remaining 4..0, and denies the 6th with retryAfterSeconds 1', () => {
  const b = new TokenBucket(1_000)
  const remaining: number[] = []
  for (let i = 0; i < 5; i++) {
    const d = b.take(1_000)
    assert.ok(d.allowed, `take ${i + 1}`)
    assert.is(d.retryAfterSeconds, 0)
    remaining.push(d.remaining)
  }
  assert.equal(remaining, [4, 3, 2, 1, 0])
  const denied = b.take(1_000)
  assert.equal(denied, { allowed: false, remaining: 0, retryAfterSeconds: 1 })
  // a denied take takes nothing: still denied, still 0
  assert.equal(b.take(1_000), { allowed: false, remaining: 0, retryAfterSeconds: 1 })
})

// contract §7: refilled continuously at 5 tokens per second
bucket('200 ms after running dry exactly one token is back', () => {
  const early = new TokenBucket(0)
  for (let i = 0; i < 5; i++) early.take(0)
  assert.is(early.take(199).allowed, false)
  const b = new TokenBucket(0)
  for (let i = 0; i < 5; i++) b.take(0)
  const d = b.take(200)
  assert.equal(d, { allowed: true, remaining: 0, retryAfterSeconds: 0 })
  assert.is(b.take(200).allowed, false)
})

// contract §7: capacity 5: an idle bucket never holds more than 5
bucket('never refills above capacity', () => {
  const b = new TokenBucket(0)
  b.take(0)
  const d = b.take(3_600_000) // an hour later
  assert.is(d.remaining, 4)
  const rest = [b.take(3_600_000), b.take(3_600_000), b.take(3_600_000), b.take(3_600_000), b.take(3_600_000)]
  assert.equal(rest.map((r) => r.allowed), [true, true, true, true, false])
})

// contract §7: X-RateLimit-Remaining counts whole tokens
bucket('remaining is the floor of the fractional tokens left', () => {
  const b = new TokenBucket(0)
  for (let i = 0; i < 5; i++) b.take(0)
  // 100 ms: half a token, not enough
  assert.equal(b.take(100), { allowed: false, remaining: 0, retryAfterSeconds: 1 })
  // 500 ms: 0.5 + 2 = 2.5 tokens, take one → 1.5 → remaining 1
  assert.equal(b.take(500), { allowed: true, remaining: 1, retryAfterSeconds: 0 })
  // 540 ms: 1.5 + 0.2 = 1.7, take one → 0.7 → remaining 0
  assert.equal(b.take(540), { allowed: true, remaining: 0, retryAfterSeconds: 0 })
})

// bucket.ts: a clock that steps back (or a stale timestamp) never adds tokens
bucket('time going backwards adds no tokens', () => {
  const b = new TokenBucket(10_000)
  for (let i = 0; i < 5; i++) b.take(10_000)
  assert.is(b.take(5_000).allowed, false)
})

// contract §7: idle buckets are dropped: a bucket is idle once it would be full again (1 s)
bucket('a bucket is idle once it would have refilled completely', () => {
  const b = new TokenBucket(0)
  for (let i = 0; i < 5; i++) b.take(0)
  assert.is(b.isIdle(999), false)
  assert.is(b.isIdle(1_000), true)
})

// contract §7: Retry-After is whole seconds, at least 1
bucket('decide rounds Retry-After up to whole seconds, at least 1, and floors remaining', () => {
  assert.equal(decide(true, 3.7, 5), { allowed: true, remaining: 3, retryAfterSeconds: 0 })
  assert.equal(decide(false, 0, 5), { allowed: false, remaining: 0, retryAfterSeconds: 1 })
  assert.equal(decide(false, 0.99, 5), { allowed: false, remaining: 0, retryAfterSeconds: 1 })
  // a slower refill waits longer: 1 token at 0.5/s is 2 s, at 0.25/s with 0.5 left is 2 s
  assert.equal(decide(false, 0, 0.5), { allowed: false, remaining: 0, retryAfterSeconds: 2 })
  assert.equal(decide(false, 0.5, 0.25), { allowed: false, remaining: 0, retryAfterSeconds: 2 })
  assert.equal(decide(false, 0, 0.3), { allowed: false, remaining: 0, retryAfterSeconds: 4 })
})

// contract §7: X-RateLimit-Limit: 5 and X-RateLimit-Remaining on every response; Retry-After on a denial
bucket('rateHeaders: limit and remaining always, Retry-After only when denied', () => {
  assert.equal(rateHeaders({ allowed: true, remaining: 3, retryAfterSeconds: 0 }), {
    'x-ratelimit-limit': '5',
    'x-ratelimit-remaining': '3',
  })
  assert.equal(rateHeaders({ allowed: false, remaining: 0, retryAfterSeconds: 1 }), {
    'x-ratelimit-limit': '5',
    'x-ratelimit-remaining': '0',
    'retry-after': '1',
  })
})

bucket.run()

// ---------------------------------------------------------------------------------------------

const limiter = suite('MemoryLimiter')

const opened: MemoryLimiter[] = []

/** A limiter on a fake clock; `at(ms)` moves the clock. Closed after the test that made it. */
function fakeLimiter(maxClients?: number): { lim: MemoryLimiter; at(ms: number): void } {
  let now = 0
  const lim = maxClients === undefined ? new MemoryLimiter(() => now) : new MemoryLimiter(() => now, maxClients)
  opened.push(lim)
  return { lim, at: (ms) => void (now = ms) }
}

// uvu runs after.each whether the test passed or failed
limiter.after.each(() => {
  for (const lim of opened.splice(0)) lim.close()
})

// contract §7: one token bucket per client IP
limiter('keeps one bucket per key: a drained key does not affect another', () => {
  const { lim } = fakeLimiter()
  const a = Array.from({ length: 6 }, () => lim.take('10.0.0.1'))
  assert.equal(a.map((d) => d.allowed), [true, true, true, true, true, false])
  assert.equal(lim.take('10.0.0.2'), { allowed: true, remaining: 4, retryAfterSeconds: 0 })
  assert.is(lim.buckets.size, 2)
})

// contract §7: refilled at 5 per second
limiter('uses its clock: a drained key has a token again 200 ms later', () => {
  const { lim, at } = fakeLimiter()
  for (let i = 0; i < 5; i++) lim.take('k')
  at(100)
  assert.is(lim.take('k').allowed, false)
  at(200)
  assert.is(lim.take('k').allowed, true)
})

// contract §7: idle buckets are dropped
limiter('the sweep drops buckets idle for a full refill and keeps recent ones', () => {
  const { lim, at } = fakeLimiter()
  lim.take('old')
  at(600)
  lim.take('recent')
  at(999)
  lim.sweep()
  assert.equal([...lim.buckets.keys()].sort(), ['old', 'recent'])
  at(1_000)
  lim.sweep()
  assert.equal([...lim.buckets.keys()], ['recent'])
  at(1_600)
  lim.sweep()
  assert.is(lim.buckets.size, 0)
})

// contract §7: a dropped idle bucket behaves like a full one (no state lost that mattered)
limiter('a key swept after idling starts again with a full bucket', () => {
  const { lim, at } = fakeLimiter()
  for (let i = 0; i < 5; i++) lim.take('k')
  at(1_000)
  lim.sweep()
  assert.equal(lim.take('k'), { allowed: true, remaining: 4, retryAfterSeconds: 0 })
})

// contract §7: the table has a hard cap, so a flood of addresses cannot exhaust memory
limiter('a flood of distinct keys never grows the table past maxClients', () => {
  const { lim } = fakeLimiter(3)
  for (let i = 0; i < 1_000; i++) {
    const d = lim.take(`10.0.${i >> 8}.${i & 255}`)
    assert.ok(d.allowed, 'a new key starts with a full bucket')
    assert.ok(lim.buckets.size <= 3, `size ${lim.buckets.size} after ${i + 1} keys`)
    assert.ok(lim.buckets.has(`10.0.${i >> 8}.${i & 255}`), 'the newest key is tracked')
  }
  assert.is(lim.buckets.size, 3)
})

// contract §7: at the cap, idle buckets go first; only when none is idle does the oldest go
limiter('at the cap it drops idle buckets first, else the oldest one', () => {
  const { lim, at } = fakeLimiter(3)
  lim.take('a')
  at(500)
  lim.take('b')
  for (let i = 0; i < 5; i++) lim.take('c') // drained at 500 ms
  at(1_000) // 'a' is idle, 'b' and 'c' are not
  lim.take('d')
  assert.equal([...lim.buckets.keys()], ['b', 'c', 'd'])
  lim.take('e') // none idle: the oldest ('b') goes
  assert.equal([...lim.buckets.keys()], ['c', 'd', 'e'])
  // 'c' kept its state: 500 ms after running dry it holds 2.5 tokens, not a fresh 5
  assert.equal([lim.take('c'), lim.take('c'), lim.take('c')].map((d) => d.allowed), [true, true, false])
})

// contract §7's hard cap under a flood of distinct addresses, none idle: each new key swept the
// whole table (0.6 ms at 100,000) and found nothing to drop.
limiter('at the cap, a flood of new keys sweeps the table at most once a second; meanwhile the oldest go', () => {
  const { lim, at } = fakeLimiter(100)
  const sweeps = countSweeps(lim)
  let now = 0
  for (let i = 0; i < 100; i++) lim.take(`a${i}`)
  for (let i = 0; i < 1_000; i++) {
    at((now += 0.5))
    assert.ok(lim.take(`b${i}`).allowed)
  }
  assert.is(sweeps(), 1)
  assert.is(lim.buckets.size, 100)
  assert.ok(lim.buckets.has('b999') && !lim.buckets.has('a99') && !lim.buckets.has('b899'))
  at((now += FULL_SWEEP_GAP_MS))
  lim.take('c') // a second later the table is swept again, and the idle ones go
  assert.is(sweeps(), 2)
  assert.ok(lim.buckets.size < 100 && lim.buckets.has('c'))
})

limiter.run()

// ---------------------------------------------------------------------------------------------

const ip = suite('clientIp')

/** A fake request: only the peer address and the headers matter. */
function req(remoteAddress: string | undefined, xff?: string | string[]): IncomingMessage {
  const headers: Record<string, string | string[]> = {}
  if (xff !== undefined) headers['x-forwarded-for'] = xff
  return { socket: { remoteAddress }, headers } as unknown as IncomingMessage
}

const LOCAL = parseTrustProxy('127.0.0.1')

// contract §7: the client IP is the socket's peer address (IPv4-mapped IPv6 as plain IPv4)
ip('an IPv4-mapped IPv6 peer counts as the plain IPv4 address', () => {
  assert.is(clientIp(req('::ffff:1.2.3.4'), undefined), '1.2.3.4')
  assert.is(clientIp(req('1.2.3.4'), undefined), '1.2.3.4')
  assert.is(clientIp(req('2001:db8::7'), undefined), '2001:db8::7')
})

// contract §7: only when TRUST_PROXY lists the peer does X-Forwarded-For count
ip('without TRUST_PROXY, X-Forwarded-For is ignored', () => {
  assert.is(clientIp(req('127.0.0.1', '9.9.9.9'), undefined), '127.0.0.1')
  assert.is(clientIp(req('127.0.0.1', '9.9.9.9'), parseTrustProxy('')), '127.0.0.1')
})

ip('a peer that is not a listed proxy is the client, whatever X-Forwarded-For says', () => {
  assert.is(clientIp(req('5.6.7.8', '9.9.9.9'), LOCAL), '5.6.7.8')
  assert.is(clientIp(req('::ffff:5.6.7.8', '9.9.9.9'), LOCAL), '5.6.7.8')
})

// contract §7: its right-most address that is not a listed proxy
ip('behind a trusted proxy, the right-most non-proxy X-Forwarded-For address counts', () => {
  assert.is(clientIp(req('127.0.0.1', '1.2.3.4'), LOCAL), '1.2.3.4')
  assert.is(clientIp(req('127.0.0.1', '1.2.3.4, 127.0.0.1'), LOCAL), '1.2.3.4')
  // a client can prepend anything; only the right-most untrusted hop is believed
  assert.is(clientIp(req('127.0.0.1', '6.6.6.6, 1.2.3.4'), LOCAL), '1.2.3.4')
  assert.is(clientIp(req('::ffff:127.0.0.1', '1.2.3.4'), LOCAL), '1.2.3.4')
  assert.is(clientIp(req('127.0.0.1', ' 1.2.3.4 ,127.0.0.1 '), LOCAL), '1.2.3.4')
})

ip('several trusted proxies (addresses and CIDRs) are all skipped', () => {
  const chain = parseTrustProxy('127.0.0.1, 10.0.0.0/8')
  assert.is(clientIp(req('127.0.0.1', '8.8.8.8, 1.2.3.4, 10.1.1.1, 10.2.2.2'), chain), '1.2.3.4')
})

ip('an IPv4-mapped or IPv6 hop in X-Forwarded-For is understood', () => {
  assert.is(clientIp(req('127.0.0.1', '::ffff:1.2.3.4'), LOCAL), '1.2.3.4')
  assert.is(clientIp(req('127.0.0.1', '2001:db8::1'), LOCAL), '2001:db8::1')
})

ip('several X-Forwarded-For headers read as one list', () => {
  assert.is(clientIp(req('127.0.0.1', ['1.1.1.1', '2.2.2.2']), LOCAL), '2.2.2.2')
})

ip('a malformed X-Forwarded-For entry falls back to the peer', () => {
  assert.is(clientIp(req('127.0.0.1', 'garbage'), LOCAL), '127.0.0.1')
  assert.is(clientIp(req('127.0.0.1', '1.2.3.4, garbage'), LOCAL), '127.0.0.1')
  assert.is(clientIp(req('127.0.0.1', ''), LOCAL), '127.0.0.1')
  assert.is(clientIp(req('127.0.0.1', '1.2.3.4:80'), LOCAL), '127.0.0.1')
  // found before reaching the malformed entry: that address counts
  assert.is(clientIp(req('127.0.0.1', 'garbage, 1.2.3.4'), LOCAL), '1.2.3.4')
})

ip('a chain of only trusted proxies, or no X-Forwarded-For, falls back to the peer', () => {
  assert.is(clientIp(req('127.0.0.1', '127.0.0.1'), LOCAL), '127.0.0.1')
  const chain = parseTrustProxy('127.0.0.1, 10.0.0.0/8')
  assert.is(clientIp(req('127.0.0.1', '10.0.0.1, 10.0.0.2'), chain), '127.0.0.1')
  assert.is(clientIp(req('127.0.0.1'), LOCAL), '127.0.0.1')
})

ip.run()
