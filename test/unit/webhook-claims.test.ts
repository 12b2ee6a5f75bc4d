// How far a node's claim of due webhook deliveries reaches (src/webhooks/deliverer.ts): the free
// slots at least, a second ahead at its pace, never more than MAX_CLAIM; and how long a claimed
// delivery may wait in the node's queue before its lease no longer covers an attempt.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { claimSize, MAX_CLAIM, startable } from '../../src/webhooks/deliverer.js'
import { LEASE_SECONDS } from '../../src/webhooks/queries.js'

test('a claim takes the free slots at least, what the recent pace sends in a second, at most MAX_CLAIM', () => {
  assert.is(claimSize(8, 0), 8, 'no pace yet: the free slots')
  assert.is(claimSize(4, 2.5), 4, 'a slow pace: the free slots')
  assert.is(claimSize(4, 60), 60, 'a second ahead at 60 a second')
  assert.is(claimSize(8, 250), MAX_CLAIM)
  assert.is(claimSize(256, 1_000), 256, 'more free slots than MAX_CLAIM: the free slots')
})

test('a claimed delivery may start while its lease still covers a whole attempt (request and record), not later', () => {
  const claimedAt = 1_000
  assert.ok(startable(claimedAt, claimedAt))
  assert.ok(startable(claimedAt, claimedAt + 4_000))
  assert.not.ok(startable(claimedAt, claimedAt + 4_001))
  assert.not.ok(startable(claimedAt, claimedAt + LEASE_SECONDS * 1000))
})

test.run()
