// Issue 8: a time limit on every request's database work (DB_TIMEOUT_MS); past it, 503
// SERVICE_UNAVAILABLE with Retry-After. Time spent outside the database (the password KDF) does
// not count against it.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { HttpError } from '../../src/http/errors.js'
import { Circuit } from '../../src/db/circuit.js'
import { Deadline } from '../../src/time-limit.js'
import { sleep } from '../helpers/wait.js'

const never = new Promise<never>(() => {})

test('work that does not settle within the budget gets 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
  const started = performance.now()
  const err = await new Deadline(50).run(never).catch((e: unknown) => e)
  assert.instance(err, HttpError)
  assert.is((err as HttpError).status, 503)
  assert.is((err as HttpError).code, 'SERVICE_UNAVAILABLE')
  assert.is((err as HttpError).headers['retry-after'], '1')
  assert.ok(performance.now() - started < 1_000)
})

test('work within the budget gets its own outcome, value or error', async () => {
  const d = new Deadline(1_000)
  assert.is(await d.run(sleep(5).then(() => 'v')), 'v')
  assert.is(await d.run(7), 7)
  const err = await d.run(Promise.reject(new Error('boom'))).catch((e: unknown) => e)
  assert.is((err as Error).message, 'boom')
})

test('one budget across runs: what the first spends, the second does not have', async () => {
  const d = new Deadline(120)
  await d.run(sleep(80))
  const err = await d.run(sleep(80)).catch((e: unknown) => e)
  assert.instance(err, HttpError)
})

test('time inside excluding() does not count, even when it starts before the run', async () => {
  const d = new Deadline(60)
  // The KDF may be the handler's first wait, before the app starts the clock with run().
  const work = d.excluding(sleep(150)).then(() => 'hashed')
  assert.is(await d.run(work), 'hashed')
  const d2 = new Deadline(60)
  assert.is(await d2.run(sleep(10).then(() => d2.excluding(sleep(150))).then(() => 'ok')), 'ok')
})

test('a late outcome after the 503 is dropped, never an unhandled rejection', async () => {
  let unhandled = 0
  const count = () => unhandled++
  process.on('unhandledRejection', count)
  const d = new Deadline(10)
  const err = await d.run(sleep(40).then(() => Promise.reject(new Error('late')))).catch((e: unknown) => e)
  assert.instance(err, HttpError)
  await sleep(60)
  process.off('unhandledRejection', count)
  assert.is(unhandled, 0)
})

test('a request let in while the circuit was closed waits for what it sent, though the circuit opens meanwhile', async () => {
  const circuit = new Circuit()
  const d = new Deadline(1_000, circuit)
  assert.is(await d.run(sleep(5).then(() => 'authenticated')), 'authenticated')
  for (let i = 0; i < 3; i++) circuit.failed() // other requests found the database gone
  assert.not.ok(circuit.allows())
  // The write it sends next may commit: it is waited for, never answered after 50 ms.
  assert.is(await d.run(sleep(200).then(() => 'committed')), 'committed')
})

test('a request that arrives while the circuit is open is not let in; what it asks gets 50 ms', async () => {
  const circuit = new Circuit()
  for (let i = 0; i < 3; i++) circuit.failed()
  const d = new Deadline(1_000, circuit)
  assert.not.ok(d.admitted())
  const started = performance.now()
  const err = await d.run(never).catch((e: unknown) => e)
  assert.is((err as HttpError).status, 503)
  assert.ok(performance.now() - started < 500)
})

test('a probe that never tells how it went is taken as failed after probeMs: the circuit lets another through and can close again', () => {
  let now = 0
  const circuit = new Circuit(() => now, 1_000)
  for (let i = 0; i < 3; i++) circuit.failed()
  now = 1_001
  assert.ok(circuit.allows(), 'the probe')
  assert.not.ok(circuit.allows(), 'one probe at a time')
  // Its request ends without asking the database (refused for a header after it was let in).
  now = 1_900
  assert.not.ok(circuit.allows(), 'still within probeMs')
  now = 2_100
  assert.not.ok(circuit.allows(), 'the lost probe counts as a failure: open again for OPEN_MS')
  now = 3_200
  assert.ok(circuit.allows(), 'a new probe')
  circuit.succeeded()
  assert.ok(circuit.allows() && circuit.allows(), 'closed')
})

test.run()
