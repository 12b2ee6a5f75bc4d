// The KDF's line (src/passwords/fair-queue.ts). Issue 9: "waiting hashes are served fairly across
// client addresses (and accounts), so a flood from one account or a few addresses delays a
// bystander's login by at most a few seconds"; the attacked account's owner is not locked out.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { FairQueue, LaneQueue, type Keys } from '../../src/passwords/fair-queue.js'
import { FAILURE_MEMORY_MS, RecentClients } from '../../src/passwords/recent-clients.js'

const test = suite('FairQueue')

function drain<T>(q: FairQueue<T>): T[] {
  const out: T[] = []
  for (let v = q.shift(); v !== undefined; v = q.shift()) out.push(v)
  return out
}

test('distinct clients are served first come, first served', () => {
  const q = new FairQueue<string>()
  for (const name of ['a', 'b', 'c', 'd']) assert.is(q.push({ client: name, account: name }, name).ahead, ['a', 'b', 'c', 'd'].indexOf(name))
  assert.is(q.size, 4)
  assert.equal(drain(q), ['a', 'b', 'c', 'd'])
  assert.is(q.size, 0)
})

// issue 9: a flood from one address only lengthens its own line
test('a newcomer goes ahead of a flood from one address', () => {
  const q = new FairQueue<string>()
  for (let i = 0; i < 70; i++) q.push({ client: '10.0.0.1', account: 'attacker' }, `flood${i}`)
  const { ahead } = q.push({ client: '10.9.9.9', account: 'bystander' }, 'bystander')
  // Of the equal first turns, the client with fewer waiting goes first.
  assert.is(ahead, 0)
  assert.equal(drain(q).slice(0, 3), ['bystander', 'flood0', 'flood1'])
})

// issue 9: 25 addresses guessing one account's password; a bystander and the owner log in
test('a flood at one account from many addresses: a bystander and the owner (from fresh addresses) go next', () => {
  const q = new FairQueue<string>()
  for (let round = 0; round < 5; round++) {
    for (let a = 0; a < 25; a++) q.push({ client: `10.25.0.${a}`, account: 'victim' }, `guess${round}.${a}`)
  }
  // Being served meanwhile: the virtual time moves on.
  for (let i = 0; i < 30; i++) q.shift()
  const owner = q.push({ client: '10.1.1.1', account: 'victim' }, 'owner')
  const bystander = q.push({ client: '10.2.2.2', account: 'bystander' }, 'bystander')
  assert.ok(owner.ahead <= 1, `owner behind ${owner.ahead}`)
  assert.ok(bystander.ahead <= 2, `bystander behind ${bystander.ahead}`)
  const order = drain(q)
  assert.ok(order.indexOf('owner') <= 1 && order.indexOf('bystander') <= 2, order.slice(0, 4).join(' '))
})

// issue 9: ... the flood's first item from each address competes; among equal turns the
// account with fewer items waiting goes first
test('at the start of such a flood, a bystander’s account goes before the attacked account’s items', () => {
  const q = new FairQueue<string>()
  for (let a = 0; a < 25; a++) q.push({ client: `10.25.0.${a}`, account: 'victim' }, `guess${a}`)
  assert.is(q.push({ client: '10.2.2.2', account: 'bystander' }, 'bystander').ahead, 1)
})

// issue 9: fair across accounts: one address asking for many accounts is still one address
test('one address flooding many accounts is one line; two clients alternate', () => {
  const q = new FairQueue<string>()
  for (let i = 0; i < 4; i++) q.push({ client: 'A', account: `a${i}` }, `A${i}`)
  for (let i = 0; i < 4; i++) q.push({ client: 'B', account: `b${i}` }, `B${i}`)
  assert.equal(drain(q), ['A0', 'B0', 'A1', 'B1', 'A2', 'B2', 'A3', 'B3'])
})

test('items without keys are served in arrival order among the rest', () => {
  const q = new FairQueue<number>()
  const none: Keys = {}
  for (let i = 0; i < 3; i++) q.push(none, i)
  assert.equal(drain(q), [0, 1, 2])
})

// issue 9: "a client that hangs up leaves the queue"; the one served last is shed first
test('remove takes an item out; last is the one to be served last', () => {
  const q = new FairQueue<string>()
  const a = q.push({ client: 'A' }, 'a0').item
  q.push({ client: 'A' }, 'a1')
  q.push({ client: 'B' }, 'b0')
  assert.is(q.last()!.value, 'a1')
  assert.ok(q.remove(a))
  assert.not.ok(q.remove(a), 'only once')
  assert.equal(drain(q), ['b0', 'a1'])
  assert.is(q.last(), undefined)
})

// issue 9: a flood's history does not outlive it (else a client shed in a flood would stay last)
test('once the line is empty, earlier turns no longer count', () => {
  const q = new FairQueue<string>()
  for (let i = 0; i < 10; i++) q.push({ client: 'A' }, `a${i}`)
  while (q.size > 0) q.remove(q.last()!)
  q.push({ client: 'A' }, 'again')
  assert.is(q.push({ client: 'B' }, 'b').ahead, 1, 'A is not ten turns behind any more')
})

test('many clients come and go without the bookkeeping growing past the line', () => {
  const q = new FairQueue<number>()
  for (let i = 0; i < 10_000; i++) {
    q.push({ client: `c${i}`, account: `u${i}` }, i)
    q.push({ client: 'steady' }, -i)
    q.shift()
  }
  assert.ok(q.size > 0)
  // Indirectly: a newcomer still goes ahead of the steady client's backlog.
  assert.ok(q.push({ client: 'new' }, 0).ahead <= 1)
})

// 100 fresh addresses each sending 5 logins a second, none failed yet (each address's
// first check has not been hashed): a bystander must not wait for a round of 100.
test('of equal turns, a client with fewer waiting goes first: a bystander goes ahead of a round of fresh pipelining addresses', () => {
  const q = new FairQueue<string>()
  for (let round = 0; round < 3; round++) for (let a = 0; a < 100; a++) q.push({ client: `10.100.${a}.1`, account: `spray${round}.${a}` }, `spray${round}.${a}`)
  for (let i = 0; i < 10; i++) q.shift()
  const { ahead } = q.push({ client: '10.9.9.9', account: 'bystander' }, 'bystander')
  assert.is(ahead, 0)
  assert.is(q.shift(), 'bystander')
})

const lanes = suite('LaneQueue')

// an address whose recent attempts failed waits behind addresses without failures
lanes('a demoted client waits behind every other, whatever the turns; among demoted ones turns are fair', () => {
  const q = new LaneQueue<string>()
  for (let i = 0; i < 3; i++) assert.is(q.push({ client: 'guesser1' }, `g1.${i}`, 'failing'), i)
  q.push({ client: 'guesser2' }, 'g2.0', 'failing')
  assert.is(q.push({ client: 'bystander1' }, 'b1', 'new'), 0)
  assert.is(q.push({ client: 'bystander2' }, 'b2', 'new'), 1)
  // behind the first lane, and of the second lane's turns behind those before its own
  assert.is(q.push({ client: 'guesser2' }, 'g2.1', 'failing'), 4)
  assert.is(q.size, 7)
  assert.is(q.last(), 'g1.2', 'the newest of the most served')
  assert.equal(Array.from({ length: 7 }, () => q.shift()), ['b1', 'b2', 'g2.0', 'g1.0', 'g2.1', 'g1.1', 'g1.2'])
  assert.is(q.shift(), undefined)
})

lanes('demote moves a client\'s waiting check behind the others; remove finds a check in either lane', () => {
  const q = new LaneQueue<string>()
  q.push({ client: 'a' }, 'a0', 'new')
  q.push({ client: 'b' }, 'b0', 'new')
  q.push({ client: 'c' }, 'c0', 'new')
  q.demote('a')
  q.demote('nobody')
  assert.ok(q.remove('c0'))
  assert.not.ok(q.remove('c0'), 'only once')
  assert.is(q.size, 2)
  assert.equal([q.shift(), q.shift(), q.shift()], ['b0', 'a0', undefined])
})

// 100 fresh addresses each sending 5 logins a second: each one's second check, sent
// before its first was served, puts all its checks behind clients that ask one at a time.
lanes('a client that asks again while a check of its own waits goes, with that check, behind clients asking one at a time', () => {
  const q = new LaneQueue<string>()
  for (let a = 0; a < 100; a++) assert.is(q.push({ client: `10.100.${a}.1` }, `first${a}`, 'new'), a)
  for (let a = 0; a < 100; a++) q.push({ client: `10.100.${a}.1` }, `second${a}`, 'new')
  assert.is(q.push({ client: 'bystander' }, 'bystander', 'new'), 0)
  assert.equal([q.shift(), q.shift(), q.shift()], ['bystander', 'first0', 'first1'])
  // once its line is empty, a client is one at a time again
  const one = new LaneQueue<string>()
  one.push({ client: 'x' }, 'x0', 'new')
  one.push({ client: 'x' }, 'x1', 'new')
  one.shift()
  one.shift()
  one.push({ client: 'y' }, 'y0', 'new')
  one.push({ client: 'y' }, 'y1', 'new')
  assert.is(one.push({ client: 'x' }, 'x2', 'new'), 0)
})

lanes('a client that passed a check lately goes ahead of clients never seen, who go ahead of failing ones: 100 fresh addresses cannot make a returning user wait', () => {
  const q = new LaneQueue<string>()
  for (let a = 0; a < 100; a++) q.push({ client: `10.200.${a}.1` }, `fresh${a}`, 'new')
  q.push({ client: 'guesser' }, 'guess', 'failing')
  assert.is(q.push({ client: 'returning' }, 'returning', 'trusted'), 0)
  assert.is(q.shift(), 'returning')
  assert.is(q.last(), 'guess')
  for (let a = 0; a < 100; a++) assert.is(q.shift(), `fresh${a}`)
  assert.is(q.shift(), 'guess')
})

lanes('a failure counts for FAILURE_MEMORY_MS; the oldest failures are forgotten first past the bound', () => {
  let now = 0
  const failing = new RecentClients(FAILURE_MEMORY_MS, () => now)
  failing.note('10.0.0.1')
  assert.ok(failing.has('10.0.0.1'))
  assert.not.ok(failing.has('10.0.0.2'))
  now = FAILURE_MEMORY_MS
  assert.ok(failing.has('10.0.0.1'))
  now = FAILURE_MEMORY_MS + 1
  assert.not.ok(failing.has('10.0.0.1'))
  for (let i = 0; i <= 65_536; i++) failing.note(`c${i}`)
  assert.not.ok(failing.has('c0'), 'the oldest went')
  assert.ok(failing.has('c1') && failing.has('c65536'))
})

test.run()
lanes.run()
