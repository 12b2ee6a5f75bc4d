// Experiments' pure parts: the weighted, sticky variant choice (experiments/variants.ts), click ids
// (click-id.ts) and the always-valid test (significance.ts) against simulated conversion rates.
import { randomBytes } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { newClickId, readClickId, withClickId, CLICK_ID_CHARS } from '../../src/experiments/click-id.js'
import { ALPHA, judge, MIN_VISITS_PER_VARIANT, pairPValue, type Arm } from '../../src/experiments/significance.js'
import { cachedExperiment, pickVariant, visitorHash } from '../../src/experiments/variants.js'

const SECRET = randomBytes(32)
const TODAY = 20_600

/** A small seeded generator (mulberry32), so a simulation fails the same way every time. */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
}

test('the choice splits 10,000 visitors by weight 20/30/50 within 3 percentage points', () => {
  const { bounds } = cachedExperiment(['a', 'b', 'c'], [20, 30, 50], false)
  const counts = [0, 0, 0]
  for (let i = 0; i < 10_000; i++) counts[pickVariant(bounds, visitorHash(SECRET, TODAY, 'aZ3kP9qR', `10.0.${i >> 8}.${i & 255}`))]!++
  counts.forEach((n, i) => assert.ok(Math.abs(n / 10_000 - [0.2, 0.3, 0.5][i]!) < 0.03, `variant ${i}: ${n}`))
})

test('the choice is the same for a visitor all day, and differs by link and day', () => {
  const { bounds } = cachedExperiment(['a', 'b'], [50, 50], false)
  const of = (day: number, code: string, who: string) => pickVariant(bounds, visitorHash(SECRET, day, code, who))
  for (let i = 0; i < 100; i++) assert.is(of(TODAY, 'aZ3kP9qR', `10.1.0.${i}`), of(TODAY, 'aZ3kP9qR', `10.1.0.${i}`))
  let movedByDay = 0
  let movedByLink = 0
  for (let i = 0; i < 200; i++) {
    if (of(TODAY, 'aZ3kP9qR', `10.2.0.${i}`) !== of(TODAY + 1, 'aZ3kP9qR', `10.2.0.${i}`)) movedByDay++
    if (of(TODAY, 'aZ3kP9qR', `10.2.0.${i}`) !== of(TODAY, 'bZ3kP9qR', `10.2.0.${i}`)) movedByLink++
  }
  // independent halves: about 100 of 200 move
  assert.ok(movedByDay > 60 && movedByDay < 140, `by day ${movedByDay}`)
  assert.ok(movedByLink > 60 && movedByLink < 140, `by link ${movedByLink}`)
})

test('a click id is 22 base64url characters and reads back as its link, variant and day', () => {
  for (const [code, variant] of [['aZ3kP9qR', 0], ['00000000', 9], ['zzzzzzzz', 3]] as const) {
    const id = newClickId(SECRET, code, variant, TODAY)
    assert.is(id.length, CLICK_ID_CHARS)
    assert.match(id, /^[A-Za-z0-9_-]{22}$/)
    assert.equal(readClickId(SECRET, id, TODAY, 30), { code, variant, dayNumber: TODAY })
  }
  const ids = new Set(Array.from({ length: 1000 }, () => newClickId(SECRET, 'aZ3kP9qR', 1, TODAY)))
  assert.is(ids.size, 1000, 'each visit gets its own id')
})

test('a forged, altered or foreign click id is refused', () => {
  const id = newClickId(SECRET, 'aZ3kP9qR', 1, TODAY)
  assert.is(readClickId(randomBytes(32), id, TODAY, 30), undefined, 'another secret')
  for (let i = 0; i < CLICK_ID_CHARS; i++) {
    const c = id[i] === 'A' ? 'B' : 'A'
    assert.is(readClickId(SECRET, id.slice(0, i) + c + id.slice(i + 1), TODAY, 30), undefined, `character ${i} changed`)
  }
  assert.is(readClickId(SECRET, randomBytes(16).toString('base64url'), TODAY, 30), undefined, 'random bytes')
  // the last character's 4 spare bits: another spelling of the same 16 bytes is not the id
  const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(id[21]!)
  const respelled = id.slice(0, 21) + 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[last ^ 1]
  assert.equal(Buffer.from(respelled, 'base64url'), Buffer.from(id, 'base64url'))
  assert.is(readClickId(SECRET, respelled, TODAY, 30), undefined, 'a second spelling of the same bytes')
  assert.is(readClickId(SECRET, id.slice(1), TODAY, 30), undefined, 'too short')
  assert.is(readClickId(SECRET, `${id.slice(1)}=`, TODAY, 30), undefined, 'not base64url')
})

test('a click id expires after the window, also across the 512-day wrap of its day', () => {
  const old = newClickId(SECRET, 'aZ3kP9qR', 0, TODAY - 30)
  assert.equal(readClickId(SECRET, old, TODAY, 30)?.dayNumber, TODAY - 30, 'the last day of the window')
  assert.is(readClickId(SECRET, old, TODAY + 1, 30), undefined, 'a day later')
  assert.is(readClickId(SECRET, newClickId(SECRET, 'aZ3kP9qR', 0, TODAY - 512), TODAY, 365), undefined, '512 days old: its 9 bits read as today, its HMAC (over the whole day) does not')
})

test('ls_cid joins the query, before any fragment', () => {
  assert.is(withClickId('https://e.com/p', 'X'), 'https://e.com/p?ls_cid=X')
  assert.is(withClickId('https://e.com/p?a=1', 'X'), 'https://e.com/p?a=1&ls_cid=X')
  assert.is(withClickId('https://e.com/p?', 'X'), 'https://e.com/p?ls_cid=X')
  assert.is(withClickId('https://e.com/p?a=1#top', 'X'), 'https://e.com/p?a=1&ls_cid=X#top')
  assert.is(withClickId('https://e.com/#/route?x', 'X'), 'https://e.com/?ls_cid=X#/route?x')
})

/** Visits and conversions of arms with these true rates, day by day; the verdict looked at after every day. */
function simulate(rates: readonly number[], visitsPerDay: number, days: number, random: () => number): { calledOn: number | null; last: ReturnType<typeof judge> } {
  const arms: Arm[] = rates.map(() => ({ visits: 0, conversions: 0 }))
  let last = judge(arms)
  for (let day = 1; day <= days; day++) {
    for (let i = 0; i < visitsPerDay; i++) {
      const a = Math.floor(random() * rates.length)
      arms[a]!.visits++
      if (random() < rates[a]!) arms[a]!.conversions++
    }
    last = judge(arms)
    if (last.confident) return { calledOn: day, last }
  }
  return { calledOn: null, last }
}

test('a clear difference (40% against 5%, 200 visitors each) is called for the better variant', () => {
  const v = judge([{ visits: 200, conversions: 80 }, { visits: 200, conversions: 10 }])
  assert.is(v.winner, 0)
  assert.ok(v.confident)
  assert.ok(v.p_value! < 1e-6, String(v.p_value))
  const three = judge([{ visits: 500, conversions: 25 }, { visits: 500, conversions: 30 }, { visits: 500, conversions: 75 }])
  assert.is(three.winner, 2)
})

test('a real difference (10% against 15%) is found by daily looks in most of 100 simulated experiments', () => {
  const random = seeded(7)
  let found = 0
  let wrong = 0
  for (let i = 0; i < 100; i++) {
    const { calledOn, last } = simulate([0.1, 0.15], 400, 60, random)
    if (calledOn !== null) last.winner === 1 ? found++ : wrong++
  }
  assert.ok(found >= 80, `found ${found} of 100`)
  assert.is(wrong, 0)
})

test('equal rates are not called: daily looks over 60 days call a winner in under 5% of 200 simulated experiments', () => {
  const random = seeded(11)
  let called = 0
  for (let i = 0; i < 200; i++) if (simulate([0.1, 0.1], 200, 60, random).calledOn !== null) called++
  let calledOfFour = 0
  for (let i = 0; i < 100; i++) if (simulate([0.05, 0.05, 0.05, 0.05], 400, 30, random).calledOn !== null) calledOfFour++
  assert.ok(called <= 10, `${called} of 200 two-variant experiments called`)
  assert.ok(calledOfFour <= 5, `${calledOfFour} of 100 four-variant experiments called`)
})

test('no winner before every variant has the minimum sample, however clear the rates', () => {
  const v = judge([{ visits: MIN_VISITS_PER_VARIANT - 1, conversions: 90 }, { visits: 500, conversions: 0 }])
  assert.ok(v.p_value! <= ALPHA)
  assert.is(v.confident, false)
  assert.is(v.winner, null)
  assert.equal(judge([{ visits: 10, conversions: 1 }]), { winner: null, p_value: null, confident: false })
  assert.is(pairPValue({ visits: 0, conversions: 0 }, { visits: 100, conversions: 5 }), 1)
  assert.is(pairPValue({ visits: 100, conversions: 0 }, { visits: 100, conversions: 0 }), 1)
})

test.run()
