// Limits on password checks beyond the spec's per-address bucket, and the leaky buckets
// they are kept in (src/ratelimit/leaky.ts, src/ratelimit/password-limits.ts), with a fake clock.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { HttpError } from '../../src/http/errors.js'
import { drainAndAdd, MemoryLeakyBuckets } from '../../src/ratelimit/leaky.js'
import { FULL_SWEEP_GAP_MS } from '../../src/ratelimit/limiter.js'
import { countSweeps } from '../helpers/sweeps.js'
import { failureDelayMs, MAX_FAILURE_DELAY_MS, noteFailedLogin, takeChangeAllowance } from '../../src/ratelimit/password-limits.js'

const leaky = suite('leaky buckets')

leaky('drainAndAdd drains for the time elapsed, then adds one if it fits under the limit', () => {
  assert.equal(drainAndAdd(0, 0, 5, 1), { added: true, level: 1 })
  assert.equal(drainAndAdd(4, 0, 5, 1), { added: true, level: 5 })
  assert.equal(drainAndAdd(5, 0, 5, 1), { added: false, level: 5 })
  assert.equal(drainAndAdd(5, 1, 5, 1), { added: true, level: 5 })
  assert.equal(drainAndAdd(5, 100, 5, 1), { added: true, level: 1 }, 'never below empty')
  assert.equal(drainAndAdd(2, -3, 5, 1), { added: true, level: 3 }, 'a clock going back drains nothing')
})

leaky('in memory: levels per key drain with time; empty buckets are swept', () => {
  let now = 1_000_000
  const buckets = new MemoryLeakyBuckets(() => now)
  for (let i = 0; i < 3; i++) buckets.add('a', 3, 1)
  assert.equal(buckets.add('a', 3, 1), { added: false, level: 3 })
  assert.equal(buckets.add('b', 3, 1), { added: true, level: 1 }, 'another key, another bucket')
  now += 1_500
  assert.equal(buckets.add('a', 3, 1), { added: true, level: 2.5 })
  now += 1_000
  buckets.sweep()
  assert.equal([...buckets.buckets.keys()], ['a'], 'b is empty again, the same as none')
  now += 3_000
  buckets.sweep()
  assert.is(buckets.buckets.size, 0)
  buckets.close()
})

// contract §7's spirit: a flood of keys cannot exhaust memory
leaky('in memory: at the cap, empty buckets go first, then the least recently touched', () => {
  let now = 0
  const buckets = new MemoryLeakyBuckets(() => now, 3)
  buckets.add('a', 9, 1)
  buckets.add('b', 9, 1)
  buckets.add('c', 9, 1)
  now += 500
  buckets.add('a', 9, 1) // touched: now the newest
  buckets.add('d', 9, 1)
  assert.equal([...buckets.buckets.keys()], ['c', 'a', 'd'])
  now += 10_000
  buckets.add('e', 9, 1)
  assert.equal([...buckets.buckets.keys()], ['e'], 'the empty ones were swept instead')
  buckets.close()
})

leaky('in memory: at the cap, a flood of new keys sweeps at most once a second; meanwhile the least recently touched go', () => {
  let now = 0
  const buckets = new MemoryLeakyBuckets(() => now, 100)
  const sweeps = countSweeps(buckets)
  for (let i = 0; i < 100; i++) buckets.add(`a${i}`, 9, 0.001)
  for (let i = 0; i < 1_000; i++) {
    now += 0.5
    assert.ok(buckets.add(`b${i}`, 9, 0.001).added)
  }
  assert.is(sweeps(), 1)
  assert.is(buckets.buckets.size, 100)
  assert.ok(buckets.buckets.has('b999') && !buckets.buckets.has('a99') && !buckets.buckets.has('b899'))
  now += FULL_SWEEP_GAP_MS
  buckets.add('c', 9, 0.001)
  assert.is(sweeps(), 2)
  buckets.close()
})

// ---------------------------------------------------------------------------------------------
const limits = suite('password limits')

// Repeated failed logins for one account slow down (documented backoff)
limits('failed logins: five free, then 0.5 s doubling to at most 15 s', () => {
  assert.equal([0, 1, 5, 5.1, 6, 6.9, 7, 8, 9, 10, 11, 30].map(failureDelayMs), [0, 0, 0, 500, 500, 1000, 1000, 2000, 4000, 8000, 15_000, 15_000])
  assert.is(MAX_FAILURE_DELAY_MS, 15_000)
})

// ... cluster-wide, per account, without letting an attacker lock the owner out for long
limits('noteFailedLogin counts per username, and the count drains by one a minute', async () => {
  let now = 0
  const buckets = new MemoryLeakyBuckets(() => now)
  const delays: number[] = []
  for (let i = 0; i < 8; i++) delays.push(await noteFailedLogin(buckets, 'alice'))
  assert.equal(delays, [0, 0, 0, 0, 0, 500, 1000, 2000])
  assert.is(await noteFailedLogin(buckets, 'Alice'), 0, 'another username as typed')
  for (let i = 0; i < 40; i++) await noteFailedLogin(buckets, 'alice')
  assert.is(await noteFailedLogin(buckets, 'alice'), 15_000, 'at most 15 s')
  now += 30 * 60_000 // half an hour later every trace is gone
  assert.is(await noteFailedLogin(buckets, 'alice'), 0)
  assert.ok([...buckets.buckets.keys()].every((k) => !k.includes('alice')), 'usernames are stored digested')
  buckets.close()
})

function assertLimited(err: unknown, retryAfter: number): void {
  assert.instance(err, HttpError)
  const e = err as HttpError
  assert.is(e.status, 429)
  assert.is(e.code, 'RATE_LIMIT_EXCEEDED')
  assert.is(e.headers['retry-after'], String(retryAfter))
}

// Password change and account deletion get a per-account and a per-address limit
limits('changes: five per account then one a minute; twenty per address then one every six seconds', async () => {
  let now = 0
  const buckets = new MemoryLeakyBuckets(() => now)
  for (let i = 0; i < 5; i++) await takeChangeAllowance(buckets, 'user-1', '10.0.0.1')
  assertLimited(await takeChangeAllowance(buckets, 'user-1', '10.0.0.1').catch((e: unknown) => e), 60)
  now += 60_000
  await takeChangeAllowance(buckets, 'user-1', '10.0.0.2')
  // One address, many accounts: the address's own allowance.
  for (let i = 0; i < 20; i++) await takeChangeAllowance(buckets, `user-${i + 2}`, '10.0.0.9')
  assertLimited(await takeChangeAllowance(buckets, 'user-99', '10.0.0.9').catch((e: unknown) => e), 6)
  await takeChangeAllowance(buckets, 'user-99', '10.0.0.3')
  buckets.close()
})

leaky.run()
limits.run()
