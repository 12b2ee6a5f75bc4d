// The visit tally on its own thread (src/stats/tally-thread.ts): what the redirect path hands on
// comes back from a take exactly as the tally folds it here, over several hand-overs and chunks;
// a batch put back is merged into the next; a thread that fails is told of and replaced, losing
// no batch put back; the thread runs only while there are visits.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parseTrustProxy } from '../../src/config.js'
import { openCountries } from '../../src/stats/geo.js'
import { CHUNK_LINKS, TallyThread } from '../../src/stats/tally-thread.js'
import { DAY_MS, dayRegisters, VisitTally, type Pending, type Visitor } from '../../src/stats/visit-tally.js'

const test = suite('tally thread')
const DAY = 20_000 * DAY_MS // a UTC midnight
const AGENTS = ['Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0', 'Googlebot/2.1', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1']

/** Visit i of a varied stream: 2.5 links per chunk's worth, three agents, a few referrers and addresses, two days. */
function visitOf(i: number): { code: string; visitor: Visitor; at: number } {
  return {
    code: `C${String(i % (CHUNK_LINKS * 2 + 50)).padStart(7, '0')}`,
    visitor: { userAgent: AGENTS[i % 3], referer: i % 4 === 0 ? undefined : `https://h${i % 7}.example/p`, forwardedFor: `198.51.100.${i % 9}`, peer: `192.0.2.${i % 5}` },
    at: DAY + (i % 2) * DAY_MS + i,
  }
}

/** A log that fails the test at the thread's failure, and one that keeps each failure's error. */
const failing = { warn: () => {}, error: (_msg: string, fields?: { err?: unknown }) => assert.unreachable(String(fields?.err)) }
const collecting = (failures: unknown[]) => ({ warn: () => {}, error: (_msg: string, fields?: { err?: unknown }) => void failures.push(fields?.err) })

const total = (batch: ReadonlyMap<string, Pending>) => [...batch.values()].reduce((n, p) => n + p.count, 0)
const sorted = (batch: ReadonlyMap<string, Pending>) => new Map([...batch].sort(([a], [b]) => (a < b ? -1 : 1)))

test('a take gives back every visit handed on, folded exactly as the tally folds them on the answering thread (countries too), each link once', async () => {
  for (const trustProxy of [undefined, parseTrustProxy('192.0.2.0/29')]) {
    const thread = new TallyThread({ trustProxy, log: failing })
    // The thread opens the bundled country database (no GEO_DB): the same here.
    const here = new VisitTally(true, trustProxy, await openCountries(undefined, failing))
    const visits = 1_300 // more than two hand-overs, and the batch in three chunks
    for (let i = 0; i < visits; i++) {
      const { code, visitor, at } = visitOf(i)
      thread.record(code, visitor, at)
      here.record(code, visitor, at)
    }
    assert.is(thread.waiting, visits)
    const taken = await thread.take()
    assert.is(thread.waiting, 0)
    assert.is(taken.batch.size, CHUNK_LINKS * 2 + 50)
    assert.is(total(taken.batch), visits)
    assert.equal(sorted(taken.batch), sorted(here.take().batch))
    assert.is(taken.visitorsDropped, false)
    assert.is((await thread.take()).batch.size, 0, 'taken once')
    await thread.close()
  }
})

test('a take given the salts of its days hashes their visitors on the thread: registers, as the flush would make them here, and no address', async () => {
  const thread = new TallyThread({ trustProxy: undefined, log: failing })
  const here = new VisitTally(true, undefined)
  for (let i = 0; i < 700; i++) {
    const { code, visitor, at } = visitOf(i)
    thread.record(code, visitor, at)
    here.record(code, visitor, at)
  }
  const days = [...thread.days()].sort()
  assert.equal(days, [20_000, 20_001], 'the days of the visits recorded')
  const salts = new Map([[20_000, 'a'.repeat(64)]]) // the second day's salt is not given: its visitors stay as they are
  const taken = (await thread.take(salts)).batch
  assert.equal([...thread.days()], [], 'a take starts the days afresh')
  let hashed = 0
  for (const [code, p] of here.take().batch) {
    for (const [dayNumber, d] of p.days) {
      const got = taken.get(code)!.days.get(dayNumber)!
      if (dayNumber === 20_000 && d.visitors.size > 0) {
        assert.equal(got.registers, dayRegisters(code, d, salts.get(20_000)!), code)
        assert.is(got.visitors.size, 0, 'no address comes back')
        hashed++
      } else assert.equal(got.visitors, d.visitors)
    }
  }
  assert.ok(hashed > 100, `${hashed} link-days hashed`)
  await thread.close()
})

test('a batch put back is merged into the next take with the visits since, and waits again', async () => {
  const thread = new TallyThread({ trustProxy: undefined, log: failing })
  const { code, visitor, at } = visitOf(3) // a browser
  thread.record(code, visitor, at)
  thread.record(code, { ...visitor, peer: '192.0.2.200' }, at)
  const first = await thread.take()
  thread.putBack(first.batch)
  assert.is(thread.waiting, 2)
  thread.record(code, { ...visitor, peer: '192.0.2.201' }, at + 1)
  thread.record(code, visitor, at + 2)
  const next = await thread.take()
  const p = next.batch.get(code)!
  assert.is(p.count, 4)
  assert.is(p.lastAtMs, at + 2)
  assert.equal([...p.days.get(Math.floor(at / DAY_MS))!.visitors].sort(), [visitor.peer, '192.0.2.200', '192.0.2.201'].sort(), 'each visitor once')
  assert.is(thread.waiting, 0)
  await thread.close()
})

test('a thread that fails is told of, the take waiting on it fails, and counting goes on on a fresh one', async () => {
  const failures: unknown[] = []
  const thread = new TallyThread({ trustProxy: undefined, log: collecting(failures) })
  // Not a string: the thread's bot test throws on it, as a bug there would.
  thread.record('AAAAAAAA', { userAgent: 42 as unknown as string, referer: undefined, forwardedFor: undefined, peer: '192.0.2.1' }, DAY)
  await thread.take().then(
    () => assert.unreachable('the take must fail'),
    (err: unknown) => assert.instance(err, Error),
  )
  assert.is(failures.length, 1)
  assert.is(thread.waiting, 0, 'what the thread held is gone, and no longer waits')
  const { code, visitor, at } = visitOf(3)
  thread.record(code, visitor, at)
  assert.is(total((await thread.take()).batch), 1)
  await thread.close()
})

test('a batch put back after the thread that gave it failed is sent whole to a fresh one', async () => {
  const failures: unknown[] = []
  const thread = new TallyThread({ trustProxy: undefined, log: collecting(failures) })
  const { code, visitor, at } = visitOf(3)
  thread.record(code, visitor, at)
  const taken = await thread.take()
  thread.record('AAAAAAAA', { userAgent: 42 as unknown as string, referer: undefined, forwardedFor: undefined, peer: '192.0.2.1' }, DAY)
  await thread.take().catch(() => undefined)
  assert.is(failures.length, 1)
  thread.putBack(taken.batch)
  assert.is(thread.waiting, 1)
  const again = await thread.take()
  assert.is(again.batch.get(code)!.count, 1, 'the visit is counted, once')
  assert.is(thread.waiting, 0)
  await thread.close()
})

test('the thread starts with the first hand-over and stops once takes have found nothing for its idle time; counting goes on after', async () => {
  const thread = new TallyThread({ trustProxy: undefined, log: failing, idleMs: 0 })
  assert.is(thread.running, false)
  assert.is((await thread.take()).batch.size, 0, 'nothing recorded: no thread needed')
  assert.is(thread.running, false)
  const { code, visitor, at } = visitOf(3)
  thread.record(code, visitor, at)
  assert.is(thread.running, false, 'a visit alone waits here for its hand-over')
  assert.is(total((await thread.take()).batch), 1)
  assert.is(thread.running, true)
  assert.is((await thread.take()).batch.size, 0)
  assert.is(thread.running, false, 'stopped by an empty take past its idle time')
  thread.record(code, visitor, at)
  assert.is(total((await thread.take()).batch), 1)
  await thread.close()
})

test.run()
