// The VisitCounter's folding (src/stats/visits.ts), against a stand-in database that records what
// a flush would write: humans and bots, referrer hosts, visitors hashed once per flush under the
// day's salt, and the bounds that keep memory in check when flushes cannot write.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Sql } from '../../src/db/types.js'
import type { Visitor } from '../../src/stats/visit-tally.js'
import { estimate, SKETCH_BYTES } from '../../src/stats/sketch.js'
import { FLUSH_CHUNK_LINKS, flushGap, VisitCounter } from '../../src/stats/visits.js'
import { createLogger } from '../../src/log.js'
import { parseTrustProxy } from '../../src/config.js'

interface Written {
  statements: string[]
  params: unknown[][]
}

/**
 * A tagged-template stand-in for postgres.js: records each statement, answers salts and flush ids,
 * can fail; `overSocket`: each answer comes in a later turn of the event loop, as a database's does.
 */
function fakeSql(fail = () => false, overSocket = false, saltFails = () => false): { sql: Sql; written: Written } {
  const written: Written = { statements: [], params: [] }
  const answer = (strings: TemplateStringsArray, ...params: unknown[]) => {
    const text = strings.join('?').replace(/\s+/g, ' ').trim()
    if (text.includes('visit_salts')) return saltFails() ? Promise.reject(new Error('connection lost')) : Promise.resolve([{ salt: Buffer.alloc(32, 7) }])
    // The flush's own time limits (set_config): settings, not writes.
    if (text.includes('set_config')) return Promise.resolve([])
    // Every flush id is new to it.
    if (text.includes('visit_flushes')) return Promise.resolve((params[0] as string[]).map((id) => ({ id })))
    // Every link and day of the sketches has a day row, with no sketch yet.
    if (text.includes('d.sketch from visit_days')) {
      const [codes, days] = params as [string[], string[]]
      return Promise.resolve(codes.map((code, i) => ({ code, day: days[i], sketch: null })))
    }
    written.statements.push(text)
    written.params.push(params)
    return Promise.resolve([])
  }
  const tag = ((strings: TemplateStringsArray, ...params: unknown[]) =>
    overSocket ? new Promise((resolve) => setImmediate(() => resolve(answer(strings, ...params)))) : answer(strings, ...params)) as unknown as Sql
  ;(tag as unknown as { begin: unknown }).begin = async (fn: (tx: Sql) => Promise<unknown>) => {
    if (fail()) throw Object.assign(new Error('connection lost'), { code: 'CONNECTION_CLOSED' })
    return fn(tag)
  }
  return { sql: tag, written }
}

const request = (headers: Record<string, string>, peer = '192.0.2.1'): Visitor => ({
  userAgent: headers['user-agent'],
  referer: headers.referer,
  forwardedFor: headers['x-forwarded-for'],
  peer,
})

/** The parameters of the statement that mentions `table`. */
const paramsOf = (w: Written, table: string) => w.params[w.statements.findIndex((s) => s.includes(`into ${table}`))]!

/** The unique visitors written, per code: the estimates of the sketches of the statement that stores them. */
function uniquesOf(w: Written): Record<string, number> {
  const [codes, , sketches] = w.params[w.statements.findIndex((s) => s.includes('set sketch'))] as [string[], string[], string[]]
  return Object.fromEntries(codes.map((code, i) => [code, Math.round(estimate(Buffer.from(sketches[i]!, 'hex')))]))
}

const test = suite('visit counter')
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0'
const quiet = createLogger('error', () => {})

test('a flush writes the totals, per-day humans and bots, referrer hosts and a sketch of the visitors per link and day', async () => {
  const { sql, written } = fakeSql()
  const counter = new VisitCounter(sql, quiet, { flushMs: 1_000, stats: true, trustProxy: undefined })
  const browser = { 'user-agent': 'Mozilla/5.0 Firefox/126.0' }
  counter.record('BBBBBBBB', request({ ...browser, referer: 'https://a.example/x' }))
  counter.record('AAAAAAAA', request({ ...browser, referer: 'https://a.example/y' }))
  counter.record('AAAAAAAA', request(browser))
  counter.record('AAAAAAAA', request(browser, '192.0.2.2'))
  counter.record('AAAAAAAA', request({ 'user-agent': 'Googlebot/2.1' }))
  await counter.flush()
  const [codes, counts] = written.params[0] as [string[], number[]]
  assert.equal([codes, counts], [['AAAAAAAA', 'BBBBBBBB'], [4, 1]])
  const [dayCodes, , humans, bots] = paramsOf(written, 'visit_days') as [string[], string[], number[], number[]]
  assert.equal([dayCodes, humans, bots], [['AAAAAAAA', 'BBBBBBBB'], [3, 1], [1, 0]])
  const [refCodes, , hosts, visits] = paramsOf(written, 'visit_referrers') as [string[], string[], string[], number[]]
  assert.equal(refCodes.map((c, i) => `${c} ${hosts[i]} ${visits[i]}`), ['AAAAAAAA a.example 1', 'AAAAAAAA direct 3', 'BBBBBBBB a.example 1'])
  assert.equal(uniquesOf(written), { AAAAAAAA: 2, BBBBBBBB: 1 }, 'two visitors of A (the bot is none), one of B')
  const [, , sketches] = written.params[written.statements.findIndex((s) => s.includes('set sketch'))] as [string[], string[], string[]]
  for (const hex of sketches) assert.is(hex.length, 2 * SKETCH_BYTES)
  written.statements.length = 0
  await counter.flush()
  assert.is(written.statements.length, 0, 'nothing new: nothing written')
})

test('visitors whose salt could not be read before the take are hashed by the flush once it can: the same sketch', async () => {
  const uniques: Array<Record<string, number>> = []
  for (const failFirst of [false, true]) {
    let saltReads = 0
    const { sql, written } = fakeSql(undefined, false, () => failFirst && saltReads++ === 0)
    const counter = new VisitCounter(sql, quiet, { flushMs: 1_000, stats: true, trustProxy: undefined })
    for (const peer of ['192.0.2.1', '192.0.2.2', '192.0.2.1']) counter.record('AAAAAAAA', request({ 'user-agent': FIREFOX }, peer))
    await counter.flush()
    await counter.stop()
    uniques.push(uniquesOf(written))
  }
  assert.equal(uniques, [{ AAAAAAAA: 2 }, { AAAAAAAA: 2 }])
})

test('with VISIT_STATS=off only the totals are written (and their link.clicked events, without the split)', async () => {
  const { sql, written } = fakeSql()
  const counter = new VisitCounter(sql, quiet, { flushMs: 1_000, stats: false, trustProxy: undefined })
  for (let i = 0; i < 3; i++) counter.record('AAAAAAAA', request({ 'user-agent': FIREFOX }))
  await counter.flush()
  assert.is(written.statements.length, 2)
  assert.equal((written.params[0] as [string[], number[]])[1], [3])
  assert.equal(written.params[written.statements.findIndex((q) => q.includes('link.clicked'))]!.slice(0, 4), [['AAAAAAAA'], [3], [null], [null]])
})

test('behind a trusted proxy the forwarded address tells visitors apart; the User-Agent does not', async () => {
  const { sql, written } = fakeSql()
  const counter = new VisitCounter(sql, quiet, { flushMs: 1_000, stats: true, trustProxy: parseTrustProxy('127.0.0.1') })
  const long = `Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0 ${'ab '.repeat(100)}`
  counter.record('AAAAAAAA', request({ 'user-agent': long, 'x-forwarded-for': '198.51.100.1' }, '127.0.0.1'))
  counter.record('AAAAAAAA', request({ 'user-agent': `${long}y`, 'x-forwarded-for': '198.51.100.1' }, '127.0.0.1'))
  counter.record('AAAAAAAA', request({ 'user-agent': long, 'x-forwarded-for': '198.51.100.2' }, '127.0.0.1'))
  await counter.flush()
  assert.equal(uniquesOf(written), { AAAAAAAA: 2 })
})

test('one address is one visitor whatever User-Agents it sends; an IPv6 client by its /64', async () => {
  const { sql, written } = fakeSql()
  const counter = new VisitCounter(sql, quiet, { flushMs: 1_000, stats: true, trustProxy: undefined })
  for (let i = 0; i < 5_000; i++) counter.record('AAAAAAAA', request({ 'user-agent': `Mozilla/5.0 #${i}` }, '203.0.113.7'))
  for (let i = 0; i < 5_000; i++) counter.record('AAAAAAAA', request({ 'user-agent': FIREFOX }, `2001:db8:1:2::${i.toString(16)}`))
  counter.record('AAAAAAAA', request({ 'user-agent': FIREFOX }, '2001:db8:1:3::1'))
  await counter.flush()
  assert.equal(uniquesOf(written), { AAAAAAAA: 3 })
})

test('a failed flush keeps everything for the next; more than 100 hosts a day between flushes go to "other"', async () => {
  let failing = true
  const { sql, written } = fakeSql(() => failing)
  const counter = new VisitCounter(sql, quiet, { flushMs: 1_000, stats: true, trustProxy: undefined })
  for (let i = 0; i < 150; i++) counter.record('AAAAAAAA', request({ 'user-agent': FIREFOX, referer: `https://h${i}.example/` }, `10.0.0.${i % 5}`))
  await counter.flush()
  assert.is(written.statements.length, 0)
  counter.record('AAAAAAAA', request({ 'user-agent': FIREFOX }, '10.0.0.9'))
  failing = false
  await counter.flush()
  assert.equal((written.params[0] as [string[], number[]])[1], [151])
  // 100 hosts were kept between the flushes (50 went to "other" at once), then the write's cap
  // of 20 sent 80 more to "other"; "direct" is never folded in
  const [, , hosts, visits] = paramsOf(written, 'visit_referrers') as [string[], string[], string[], number[]]
  assert.is(hosts.length, 22, '20 hosts, "direct" and "other"')
  assert.equal([visits[hosts.indexOf('other')], visits[hosts.indexOf('direct')]], [130, 1])
  // six visitors; a sketch may put two of so few in one register (its error bound, docs/decisions.md)
  assert.ok(Math.abs(uniquesOf(written).AAAAAAAA! - 6) <= 1, JSON.stringify(uniquesOf(written)))
})

test('a flush stuck on a connection that never answers is left behind after its time limit: the next flush writes its visits under the same id, and counting goes on', async () => {
  const { sql, written } = fakeSql()
  const working = (sql as unknown as { begin: (fn: (tx: Sql) => Promise<unknown>) => Promise<unknown> }).begin
  let hang = true
  ;(sql as unknown as { begin: unknown }).begin = (fn: (tx: Sql) => Promise<unknown>) => (hang ? new Promise(() => undefined) : working(fn))
  const warnings: string[] = []
  const log = { ...quiet, warn: (msg: string) => void warnings.push(msg) } as unknown as typeof quiet
  const counter = new VisitCounter(sql, log, { flushMs: 1_000, stats: false, trustProxy: undefined, flushLimitMs: 50 })
  counter.record('AAAAAAAA', request({}))
  const started = performance.now()
  await counter.flush()
  assert.ok(performance.now() - started < 1_000, 'the stuck flush is not waited for')
  assert.match(warnings.join('\n'), /did not finish in time/)
  hang = false
  counter.record('AAAAAAAA', request({}))
  await counter.flush()
  assert.equal((written.params[0] as [string[], number[]])[1], [2], 'both visits, once')
})

test('past 100,000 distinct visitors waiting, more are not counted as unique, and the log says so', async () => {
  const lines: string[] = []
  const { sql, written } = fakeSql()
  const log = createLogger('warn', (t) => lines.push(t))
  const counter = new VisitCounter(sql, log, { flushMs: 1_000, stats: true, trustProxy: undefined })
  for (let i = 0; i < 100_005; i++) counter.record('AAAAAAAA', request({ 'user-agent': FIREFOX }, `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`))
  await counter.flush()
  const uniques = uniquesOf(written).AAAAAAAA!
  assert.ok(Math.abs(uniques - 100_000) < 100_000 * 0.1, `about 100,000 counted: ${uniques}`)
  assert.equal((paramsOf(written, 'visit_days') as [string[], string[], number[]])[2], [100_005], 'every visit still counts')
  log.flush()
  assert.ok(lines.some((l) => l.includes('not counted as unique')), lines.join('\n'))
})

const breakdownsOf = (w: Written) => {
  const [, , dims, values, visits] = paramsOf(w, 'visit_dims') as [string[], string[], string[], string[], number[]]
  return dims.map((d, i) => `${d}=${values[i]}:${visits[i]}`)
}

test('a flush writes human visits by device, browser, OS and country (the bundled database, looked up on the tally thread), in the same transaction, in (dim, value) order', async () => {
  const { sql, written } = fakeSql()
  const counter = new VisitCounter(sql, quiet, { flushMs: 1_000, stats: true, trustProxy: undefined })
  counter.record('AAAAAAAA', request({ 'user-agent': FIREFOX }, '8.8.8.8'))
  counter.record('AAAAAAAA', request({ 'user-agent': FIREFOX }, '192.0.2.2'))
  counter.record('AAAAAAAA', request({ 'user-agent': 'Googlebot/2.1' }, '8.8.8.8'))
  await counter.flush()
  await counter.stop()
  assert.equal(breakdownsOf(written), ['browser=Firefox:2', 'country=US:1', 'country=unknown:1', 'device=desktop:2', 'os=Linux:2'])
})

test('GEO_DB=off leaves every country unknown; a GEO_DB file that cannot be read does too, and the tally thread\'s warning reaches the log', async () => {
  for (const geoDb of ['off', '/nonexistent/GeoLite2-Country.mmdb']) {
    const lines: string[] = []
    const log = createLogger('warn', (t) => lines.push(t))
    const { sql, written } = fakeSql()
    const counter = new VisitCounter(sql, log, { flushMs: 1_000, stats: true, trustProxy: undefined, geoDb })
    counter.record('AAAAAAAA', request({ 'user-agent': FIREFOX }, '8.8.8.8'))
    await counter.flush()
    await counter.stop()
    assert.ok(breakdownsOf(written).includes('country=unknown:1'), geoDb)
    log.flush()
    const warned = lines.some((l) => l.includes('country database cannot be read') && l.includes(geoDb))
    assert.is(warned, geoDb !== 'off', lines.join('\n'))
  }
})

// Issue 22: a flush of many links leaves the event loop free between chunks of FLUSH_CHUNK_LINKS
test('a flush of many links is written a chunk of at most FLUSH_CHUNK_LINKS links at a time, each link once, in code order, in one transaction, the event loop turning between chunks', async () => {
  const { sql, written } = fakeSql(undefined, true)
  let transactions = 0
  const begin = (sql as unknown as { begin: (fn: (tx: Sql) => Promise<unknown>) => Promise<unknown> }).begin
  ;(sql as unknown as { begin: unknown }).begin = (fn: (tx: Sql) => Promise<unknown>) => (transactions++, begin(fn))
  const counter = new VisitCounter(sql, quiet, { flushMs: 1_000, stats: true, trustProxy: undefined })
  const total = FLUSH_CHUNK_LINKS * 2 + 1
  const codes = Array.from({ length: total }, (_, i) => `C${String(total - i).padStart(7, '0')}`)
  for (const code of codes) counter.record(code, request({ 'user-agent': FIREFOX }))
  // Stamps the statement order: a callback queued behind each statement runs before the next chunk's first.
  const turns: number[] = []
  const stamp = setInterval(() => turns.push(written.statements.length), 0)
  await counter.flush()
  clearInterval(stamp)
  const chunks = written.statements.flatMap((s, i) => (s.includes('update links set visits') ? [written.params[i]![0] as string[]] : []))
  assert.equal(chunks.map((c) => c.length), [FLUSH_CHUNK_LINKS, FLUSH_CHUNK_LINKS, 1])
  assert.equal(chunks.flat(), [...codes].sort())
  assert.is(transactions, 1)
  const chunkStarts = written.statements.flatMap((s, i) => (s.includes('update links set visits') ? [i] : []))
  for (const start of chunkStarts.slice(1)) assert.ok(turns.some((n) => n <= start && n > chunkStarts[0]!), `a timer ran between the chunks (statements: ${turns.join(',')})`)
})

test('flushes are paced by their cost: VISIT_FLUSH_MS while they are quick, nine times a slow one\'s time after it, never more than 5 s unless VISIT_FLUSH_MS says more', () => {
  assert.is(flushGap(1_000, 20), 1_000)
  assert.is(flushGap(1_000, 300), 2_700)
  assert.is(flushGap(1_000, 2_000), 5_000)
  assert.is(flushGap(300, 10), 300)
  assert.is(flushGap(10_000, 2_000), 10_000)
})

test.run()
