// The visit tally (src/stats/visit-tally.ts): pure folding, with the time of each visit given, no
// timer and no database.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parseTrustProxy } from '../../src/config.js'
import { splitDimKey } from '../../src/stats/breakdowns.js'
import { applyRegisters, emptySketch, estimate, SKETCH_BYTES, STANDARD_ERROR } from '../../src/stats/sketch.js'
import { appendVisit, DAY_MS, noVisits, VisitTally, type Visitor } from '../../src/stats/visit-tally.js'

const test = suite('visit tally')
const DAY = 20_000 * DAY_MS // a UTC midnight
const browser = 'Mozilla/5.0 Firefox/126.0'
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0'
const visitor = (over: Partial<Visitor> = {}): Visitor => ({ userAgent: browser, referer: undefined, forwardedFor: undefined, peer: '192.0.2.1', ...over })

test('visits are counted per code and per UTC day, humans apart from bots, with the latest time', () => {
  const tally = new VisitTally(true, undefined)
  tally.record('AAAAAAAA', visitor(), DAY + 5)
  tally.record('AAAAAAAA', visitor({ userAgent: 'Googlebot/2.1' }), DAY + 9)
  tally.record('AAAAAAAA', visitor(), DAY + DAY_MS + 1)
  tally.record('BBBBBBBB', visitor(), DAY + 1)
  assert.is(tally.waiting, 4)
  const { batch } = tally.take()
  assert.is(tally.waiting, 0)
  const a = batch.get('AAAAAAAA')!
  assert.is(a.count, 3)
  assert.is(a.lastAtMs, DAY + DAY_MS + 1)
  assert.equal([...a.days.keys()], [20_000, 20_001])
  assert.equal([a.days.get(20_000)!.humans, a.days.get(20_000)!.bots], [1, 1])
  assert.is(batch.get('BBBBBBBB')!.count, 1)
})

test('a visitor is one address, whatever its user agent: repeats are not counted twice', () => {
  const tally = new VisitTally(true, undefined)
  tally.record('AAAAAAAA', visitor(), DAY)
  tally.record('AAAAAAAA', visitor(), DAY + 1)
  tally.record('AAAAAAAA', visitor({ peer: '192.0.2.2' }), DAY + 2)
  tally.record('AAAAAAAA', visitor({ userAgent: 'Mozilla/5.0 Chrome/125.0' }), DAY + 3)
  const day = tally.take().batch.get('AAAAAAAA')!.days.get(20_000)!
  assert.equal([...day.visitors], ['192.0.2.1', '192.0.2.2'])
})

test('X-Forwarded-For names the visitor only when the peer is a trusted proxy', () => {
  const trusting = new VisitTally(true, parseTrustProxy('127.0.0.1'))
  trusting.record('AAAAAAAA', visitor({ peer: '127.0.0.1', forwardedFor: '203.0.113.9' }), DAY)
  assert.equal([...trusting.take().batch.get('AAAAAAAA')!.days.get(20_000)!.visitors.keys()], ['203.0.113.9'])
  const wary = new VisitTally(true, undefined)
  wary.record('AAAAAAAA', visitor({ peer: '127.0.0.1', forwardedFor: '203.0.113.9' }), DAY)
  assert.equal([...wary.take().batch.get('AAAAAAAA')!.days.get(20_000)!.visitors.keys()], ['127.0.0.1'])
})

test('referrers are counted by host, a visit without one as direct', () => {
  const tally = new VisitTally(true, undefined)
  tally.record('AAAAAAAA', visitor({ referer: 'https://a.example/x' }), DAY)
  tally.record('AAAAAAAA', visitor({ referer: 'https://a.example/y' }), DAY)
  tally.record('AAAAAAAA', visitor(), DAY)
  const referrers = tally.take().batch.get('AAAAAAAA')!.days.get(20_000)!.referrers
  assert.is(referrers.get('a.example'), 2)
  assert.is(referrers.size, 2)
})

test('with statistics off only the totals are kept', () => {
  const tally = new VisitTally(false, undefined)
  tally.record('AAAAAAAA', visitor(), DAY)
  const a = tally.take().batch.get('AAAAAAAA')!
  assert.is(a.count, 1)
  assert.is(a.days.size, 0)
})

test('a batch put back merges with what was counted since, visitors once', () => {
  const tally = new VisitTally(true, undefined)
  tally.record('AAAAAAAA', visitor(), DAY)
  const { batch } = tally.take()
  tally.record('AAAAAAAA', visitor(), DAY + 7)
  tally.record('AAAAAAAA', visitor({ peer: '192.0.2.2' }), DAY + 8)
  tally.fold()
  tally.putBack(batch)
  const a = tally.take().batch.get('AAAAAAAA')!
  assert.is(a.count, 3)
  assert.is(a.lastAtMs, DAY + 8)
  const day = a.days.get(20_000)!
  assert.is(day.humans, 3)
  assert.equal([...day.visitors.keys()].sort(), ['192.0.2.1', '192.0.2.2'])
})

test('a take given its day\'s salt hands the visitors over hashed; put back, they merge with the visitors since, and the sketch counts each once', () => {
  const salts = new Map([[20_000, 'f'.repeat(64)]])
  const tally = new VisitTally(true, undefined)
  tally.record('AAAAAAAA', visitor(), DAY)
  tally.record('AAAAAAAA', visitor({ peer: '192.0.2.2' }), DAY)
  const { batch } = tally.take(salts)
  const first = batch.get('AAAAAAAA')!.days.get(20_000)!
  assert.is(first.visitors.size, 0)
  assert.is(first.registers.length, 2)
  tally.putBack(batch)
  tally.record('AAAAAAAA', visitor(), DAY + 1) // seen before the put-back
  tally.record('AAAAAAAA', visitor({ peer: '192.0.2.3' }), DAY + 2)
  const day = tally.take(salts).batch.get('AAAAAAAA')!.days.get(20_000)!
  const sketch = emptySketch()
  applyRegisters(sketch, day.registers)
  assert.is(Math.round(estimate(sketch)), 3)
  assert.is(day.humans, 4)
})

test('a link-day\'s hashed visitors never outgrow a sketch, however many failed flushes put them back', () => {
  const salts = new Map([[20_000, 'e'.repeat(64)]])
  const tally = new VisitTally(true, undefined)
  let batch = new Map()
  for (let flush = 0; flush < 50; flush++) {
    tally.putBack(batch)
    for (let i = 0; i < 300; i++) tally.record('AAAAAAAA', visitor({ peer: `10.${flush}.${i >> 8}.${i & 255}` }), DAY)
    batch = tally.take(salts).batch
  }
  const day = batch.get('AAAAAAAA')!.days.get(20_000)!
  assert.ok(day.registers.length <= SKETCH_BYTES, `${day.registers.length} registers`)
  const sketch = emptySketch()
  applyRegisters(sketch, day.registers)
  assert.ok(Math.abs(estimate(sketch) - 15_000) / 15_000 < 3 * STANDARD_ERROR, `about 15,000 visitors: ${Math.round(estimate(sketch))}`)
  assert.is(day.humans, 15_000)
})

test('the breakdowns count human visits by device, browser, OS and country as they are folded; bots are not in them', () => {
  const tally = new VisitTally(true, undefined, (a) => (a === '192.0.2.1' ? 'NL' : 'unknown'))
  tally.record('AAAAAAAA', visitor({ userAgent: FIREFOX }), DAY)
  tally.record('AAAAAAAA', visitor({ userAgent: FIREFOX }), DAY + 1)
  tally.record('AAAAAAAA', visitor({ peer: '192.0.2.2', userAgent: 'Mozilla/5.0 Other/1.0' }), DAY + 2)
  tally.record('AAAAAAAA', visitor({ userAgent: 'Googlebot/2.1' }), DAY + 3)
  const day = tally.take().batch.get('AAAAAAAA')!.days.get(20_000)!
  const counts = Object.fromEntries([...day.dims].map(([key, n]) => [splitDimKey(key).join('='), n]))
  assert.equal(counts, { 'device=desktop': 2, 'browser=Firefox': 2, 'os=Linux': 2, 'device=other': 1, 'browser=other': 1, 'os=other': 1, 'country=NL': 2, 'country=unknown': 1 })
})

test('a User-Agent is cut to 512 characters when it is recorded', () => {
  const long = `${browser} ${'ab '.repeat(2_000)}`
  const raw = noVisits()
  appendVisit(raw, 'AAAAAAAA', visitor({ userAgent: long }), DAY, true, undefined)
  assert.is(raw.agents[0]!.length, 512)
})

test.run()
