// contract §3: hashing never blocks the event loop, and (issue 2) a slow or hostile client cannot
// hold the server: the KDF's line is bounded in length and in time, and skips clients that left.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { KdfQueue } from '../../src/auth/kdf-queue.js'
import { ClientGone } from '../../src/http/body.js'
import { HttpError } from '../../src/http/errors.js'

/** A task that finishes when told to, recording when it started. */
function gate(log: string[], name: string) {
  let open!: () => void
  const done = new Promise<string>((resolve) => (open = () => resolve(name)))
  return { task: () => (log.push(name), done), open }
}

const tick = () => new Promise((r) => setImmediate(r))

function assertBusy(err: unknown): void {
  assert.instance(err, HttpError)
  assert.is((err as HttpError).status, 503)
  assert.is((err as HttpError).code, 'SERVICE_UNAVAILABLE')
  assert.is((err as HttpError).headers['retry-after'], '1')
}

const test = suite('KdfQueue')

test('runs at most `slots` tasks at once, the rest in arrival order', async () => {
  const q = new KdfQueue(2, 10, 10_000)
  const log: string[] = []
  const gates = ['a', 'b', 'c', 'd'].map((n) => gate(log, n))
  const runs = gates.map((g) => q.run(g.task))
  await tick()
  assert.equal(log, ['a', 'b'])
  assert.is(q.waiting, 2)
  gates[1]!.open()
  await tick()
  assert.equal(log, ['a', 'b', 'c'])
  gates[0]!.open()
  gates[2]!.open()
  gates[3]!.open()
  assert.equal(await Promise.all(runs), ['a', 'b', 'c', 'd'])
  assert.is(q.waiting, 0)
})

test('a full line refuses at once with 503 SERVICE_UNAVAILABLE and Retry-After', async () => {
  const q = new KdfQueue(1, 2, 10_000)
  const log: string[] = []
  const gates = ['a', 'b', 'c'].map((n) => gate(log, n))
  const runs = gates.map((g) => q.run(g.task))
  let refused: unknown
  await q.run(async () => 'x').catch((err: unknown) => (refused = err))
  assertBusy(refused)
  for (const g of gates) g.open()
  assert.equal(await Promise.all(runs), ['a', 'b', 'c'])
})

test('a task that waits longer than maxWaitMs is refused with 503, and the line moves on', async () => {
  const q = new KdfQueue(1, 5, 30)
  const log: string[] = []
  const first = gate(log, 'first')
  const running = q.run(first.task)
  const late = q.run(async () => 'late').catch((err: unknown) => err)
  await new Promise((r) => setTimeout(r, 60))
  assertBusy(await late)
  assert.is(q.waiting, 0, 'the refused one left the line')
  first.open()
  assert.is(await running, 'first')
  assert.is(await q.run(async () => 'next'), 'next', 'the slot was handed back')
})

test('a task whose client has gone by its turn is skipped, and the slot passes on', async () => {
  const q = new KdfQueue(1, 5, 10_000)
  const log: string[] = []
  const first = gate(log, 'first')
  const running = q.run(first.task)
  let clientThere = true
  const gone = q.run(async () => (log.push('gone'), 'gone'), () => clientThere).catch((err: unknown) => err)
  const after = q.run(async () => (log.push('after'), 'after'))
  clientThere = false
  first.open()
  assert.instance(await gone, ClientGone)
  assert.is(await after, 'after')
  assert.is(await running, 'first')
  assert.equal(log, ['first', 'after'], 'the gone client’s task never ran')
})

test.run()
