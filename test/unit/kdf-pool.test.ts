// The KDF's worker threads and the line in front of them (src/passwords/kdf-pool.ts). Issue 9:
// hashes run on worker_threads, never the event loop; shedding with 503 + Retry-After only past
// a documented bound (MAX_WAITING waiting, or a wait past MAX_WAIT_MS); a client that hangs up
// leaves the queue.
import { randomBytes } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { ClientGone } from '../../src/http/body.js'
import { HttpError } from '../../src/http/errors.js'
import { derive, type KdfJob } from '../../src/passwords/derive.js'
import { costKey, KdfPool, MAX_WAIT_MS, MAX_WAITING, type Claim } from '../../src/passwords/kdf-pool.js'
import { sleep, until } from '../helpers/wait.js'

const quick = (password = 'pw'): KdfJob => ({ alg: 'argon2id', password, salt: randomBytes(16), memoryKiB: 8, iterations: 1, dkLen: 32 })
// A few hundred milliseconds on one core: long enough for a line to form behind it.
const slow = (): KdfJob => ({ alg: 'argon2id', password: 'pw', salt: randomBytes(16), memoryKiB: 32_768, iterations: 3, dkLen: 32 })
const from = (client: string): Claim => ({ keys: { client } })

async function outcome(p: Promise<unknown>): Promise<unknown> {
  try {
    return await p
  } catch (err) {
    return err
  }
}

function assertBusy(err: unknown, label = ''): void {
  assert.instance(err, HttpError, label)
  const e = err as HttpError
  assert.is(e.status, 503, label)
  assert.is(e.code, 'SERVICE_UNAVAILABLE', label)
  assert.ok(Number(e.headers['retry-after']) >= 1, `${label} Retry-After ${e.headers['retry-after']}`)
}

const test = suite('KdfPool')

test('the documented bound: 512 waiting, 25 s of wait', () => {
  assert.is(MAX_WAITING, 512)
  assert.is(MAX_WAIT_MS, 25_000)
})

// No KDF on the main thread; the result is the same derivation
test('derives on a worker thread the same key as derive() here, and learns what a cost takes', async () => {
  const pool = new KdfPool(2)
  const job = quick('correct horse')
  const { key, ms } = await pool.run(job, from('a'))
  assert.ok(key.equals(Buffer.from(derive(job))))
  assert.ok(ms > 0)
  assert.is(pool.typicalMs(costKey(job)), ms)
  assert.is(pool.typicalMs(costKey(slow())), undefined)
  await pool.close()
})

// Issue 22: an idle service holds no KDF threads (each an isolate and its last hash's memory)
test('threads start on first use, up to `threads`, stop after idleMs without a hash, and start again for the next', async () => {
  const pool = new KdfPool(2, undefined, undefined, 150)
  assert.is(pool.alive, 0)
  await pool.run(quick(), from('a'))
  assert.is(pool.alive, 1)
  await Promise.all([pool.run(slow(), from('a')), pool.run(quick(), from('b'))])
  assert.is(pool.alive, 2)
  await until(5_000, () => pool.alive === 0, { why: () => `${pool.alive} threads alive` })
  const job = quick('after the pause')
  const { key } = await pool.run(job, from('c'))
  assert.ok(key.equals(Buffer.from(derive(job))))
  assert.is(pool.alive, 1)
  await pool.close()
})

test('a hash started before idleMs ran out keeps the threads', async () => {
  const pool = new KdfPool(1, undefined, undefined, 2_000)
  await pool.run(quick(), from('a'))
  await sleep(1_500)
  await pool.run(quick(), from('a'))
  await sleep(1_500)
  assert.is(pool.alive, 1, 'the second hash restarted the quiet period')
  await pool.close()
})

test('at most `threads` run at once; the rest wait their turn', async () => {
  const pool = new KdfPool(1)
  const runs = [pool.run(slow(), from('a')), pool.run(quick(), from('b')), pool.run(quick(), from('c'))]
  assert.is(pool.waiting, 2)
  await Promise.all(runs)
  assert.is(pool.waiting, 0)
  await pool.close()
})

// Past the bound, the one shed is the newest of whoever queued most, not a newcomer
test('past maxWaiting the item served last is refused with 503, and a newcomer keeps its place', async () => {
  const pool = new KdfPool(1, 3)
  const running = pool.run(slow(), from('A'))
  const flood = [1, 2, 3].map(() => outcome(pool.run(quick(), from('A'))))
  const bystander = pool.run(quick(), from('B'))
  assertBusy(await flood[2], 'the flood’s newest')
  assert.ok(Buffer.isBuffer((await bystander).key))
  for (const r of await Promise.all([running, flood[0], flood[1]])) assert.ok(Buffer.isBuffer((r as { key: Buffer }).key))
  await pool.close()
})

test('a request whose expected wait passes maxWaitMs is refused at once', async () => {
  const pool = new KdfPool(1, 512, 50)
  await pool.run(slow(), from('A')) // the pool now knows a derivation takes longer than 50 ms
  const running = pool.run(slow(), from('A'))
  let settled = false
  const refused = outcome(pool.run(quick(), from('B'))).finally(() => (settled = true))
  await new Promise((r) => setImmediate(r))
  assert.ok(settled, 'refused before the running one finished')
  assertBusy(await refused)
  assert.is(pool.waiting, 0)
  await running
  await pool.close()
})

test('a request still waiting after maxWaitMs is refused, and the line moves on', async () => {
  const pool = new KdfPool(1, 512, 60) // nothing measured yet: admitted, then timed out
  const running = pool.run(slow(), from('A'))
  const late = outcome(pool.run(quick(), from('B')))
  assertBusy(await late)
  assert.is(pool.waiting, 0)
  await running
  assert.ok(Buffer.isBuffer((await pool.run(quick(), from('C'))).key))
  await pool.close()
})

// A client that hangs up leaves the queue
test('a request whose client leaves is out of the line at once; a started one unsubscribes', async () => {
  const pool = new KdfPool(1)
  let unsubscribed = 0
  let leave!: () => void
  const running = pool.run(slow(), { keys: {}, whenGone: () => () => unsubscribed++ })
  const waiting = outcome(pool.run(quick(), { keys: { client: 'B' }, whenGone: (l) => ((leave = l), () => unsubscribed++) }))
  const after = pool.run(quick(), { keys: { client: 'C' }, whenGone: () => () => unsubscribed++ })
  assert.is(pool.waiting, 2)
  leave()
  assert.is(pool.waiting, 1)
  assert.instance(await waiting, ClientGone)
  await Promise.all([running, after])
  assert.is(unsubscribed, 2, 'the one that left, and the one that waited and started')
  leave() // a late 'close' changes nothing
  await pool.close()
})

test('a client gone before its request could wait is not queued', async () => {
  const pool = new KdfPool(1)
  const running = pool.run(slow(), from('A'))
  const gone = outcome(pool.run(quick(), { keys: {}, whenGone: (leave) => (leave(), () => {}) }))
  assert.instance(await gone, ClientGone)
  assert.is(pool.waiting, 0)
  await running
  await pool.close()
})

test('a derivation that fails rejects its request, and the thread serves the next', async () => {
  const pool = new KdfPool(1)
  const bad = outcome(pool.run({ ...quick(), dkLen: 2 }, from('A'))) // RFC 9106: a tag of at least 4 bytes
  const good = pool.run(quick(), from('B'))
  const err = await bad
  assert.instance(err, Error)
  assert.match((err as Error).message, /^KDF failed/)
  assert.ok(Buffer.isBuffer((await good).key))
  await pool.close()
})

test('close drops what waits and refuses what comes after', async () => {
  const pool = new KdfPool(1)
  const running = outcome(pool.run(slow(), from('A')))
  const waiting = outcome(pool.run(quick(), from('B')))
  await pool.close()
  assert.instance(await waiting, ClientGone)
  assert.instance(await running, ClientGone)
  assert.instance(await outcome(pool.run(quick(), from('C'))), ClientGone)
})

test.run()
