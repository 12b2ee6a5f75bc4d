// Start and visit limits (issue 25): before starts_at a link answers as an unknown code would;
// with max_visits it serves that many 302s (GETs), then 410 LINK_EXHAUSTED. The cap is taken in
// the database before each 302 (a busy link's by blocks a node holds, issue 34), so it is exact
// under concurrency and across nodes; links without a cap stay a pure cache look-up.
import * as assert from 'uvu/assert'
import { Guarded } from '../../src/links/redirect-cache.js'
import { assertError, assertFieldErrors, call, newLink, newUser, type User } from '../helpers/api.js'
import { suite } from 'uvu'
import { feedSettled, serverSuite, startServer, type TestServer, twoNodeSuite } from '../helpers/server.js'
import { until } from '../helpers/wait.js'
import { setTimeout as sleep } from 'node:timers/promises'

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString()
const create = (srv: TestServer, token: string, body: unknown) => call(srv.url, 'POST', '/api/v1/links', { token, body })
const patch = (srv: TestServer, token: string, code: string, body: unknown) => call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token, body })
const visit = (srv: TestServer, code: string, headers: Record<string, string> = {}) => call(srv.url, 'GET', `/r/${code}`, { headers })
const BROWSER = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }

const test = serverSuite<{ user: User }>('link start and visit limits')
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('starts_at and max_visits are set on create, returned and listed; null means none', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: 'https://example.com/', starts_at: '2099-06-01T12:30:00+02:00', max_visits: 3 })
  assert.is(res.status, 201, res.text)
  assert.equal([res.body.starts_at, res.body.max_visits, res.body.visits_left], ['2099-06-01T10:30:00.000Z', 3, 3])
  const got = await call(srv.url, 'GET', `/api/v1/links/${res.body.code}`, { token: user.token })
  assert.equal([got.body.starts_at, got.body.max_visits, got.body.visits_left], ['2099-06-01T10:30:00.000Z', 3, 3])
  const plain = await create(srv, user.token, { url: 'https://example.com/', starts_at: null, max_visits: null })
  assert.equal([plain.body.starts_at, plain.body.max_visits, plain.body.visits_left], [null, null, null])
})

test('starts_at must be an RFC 3339 timestamp before expires_at; max_visits a whole number from 1 to 10^9', async ({ srv, user }) => {
  const url = 'https://example.com/'
  assertFieldErrors(await create(srv, user.token, { url, starts_at: 1893456000 }), [['starts_at', 'TYPE']])
  assertFieldErrors(await create(srv, user.token, { url, starts_at: 'tomorrow' }), [['starts_at', 'INVALID']])
  assertFieldErrors(await create(srv, user.token, { url, starts_at: '2099-02-01T00:00:00Z', expires_at: '2099-01-01T00:00:00Z' }), [['starts_at', 'INVALID']])
  for (const bad of ['3', 2.5, true]) assertFieldErrors(await create(srv, user.token, { url, max_visits: bad }), [['max_visits', 'TYPE']], String(bad))
  for (const bad of [0, -1, 1_000_000_001]) assertFieldErrors(await create(srv, user.token, { url, max_visits: bad }), [['max_visits', 'INVALID']], String(bad))
  // a start in the past is a link that works at once
  const past = await create(srv, user.token, { url, starts_at: inMs(-60_000) })
  assert.is(past.status, 201, past.text)
  assert.is((await visit(srv, past.body.code)).status, 302)
})

test('before starts_at the link answers exactly as an unknown code (JSON, page, preview), then redirects from the cache', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: 'https://example.com/later', starts_at: inMs(1_500) })
  const code = res.body.code
  await feedSettled(srv)
  const early = await visit(srv, code)
  const unknown = await visit(srv, 'Zz9Zz9Zz')
  assertError(early, 404, 'LINK_NOT_FOUND')
  assert.is(early.text, unknown.text)
  assert.ok(srv.service.deps.cache.get(code) === null, 'cached with its start')
  assert.is((await call(srv.url, 'HEAD', `/r/${code}`)).status, 404)
  const page = await visit(srv, code, BROWSER)
  assert.is(page.status, 404)
  assert.match(page.text, /This short link does not exist/)
  assert.not.match(page.text, /example\.com/)
  assertError(await call(srv.url, 'GET', `/r/${code}/preview`), 404, 'LINK_NOT_FOUND')
  await until(4_000, async () => (await visit(srv, code)).status === 302)
  assert.is(srv.service.deps.cache.get(code), 'https://example.com/later', 'the same cache entry, now started')
  // PATCH moves it to the future again; null removes it
  assert.is((await patch(srv, user.token, code, { starts_at: '2099-01-01T00:00:00Z' })).body.starts_at, '2099-01-01T00:00:00.000Z')
  assert.is((await visit(srv, code)).status, 404)
  assert.is((await patch(srv, user.token, code, { starts_at: null })).body.starts_at, null)
  assert.is((await visit(srv, code)).status, 302)
})

test('max_visits: 3 answers 302 three times, then 410 LINK_EXHAUSTED (JSON and page); HEAD takes no visit', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: 'https://example.com/thrice', max_visits: 3 })
  const code = res.body.code
  assert.is((await call(srv.url, 'HEAD', `/r/${code}`)).status, 302)
  for (let i = 0; i < 3; i++) {
    const r = await visit(srv, code)
    assert.equal([r.status, r.headers.get('location')], [302, 'https://example.com/thrice'], `visit ${i + 1}`)
  }
  const over = await visit(srv, code)
  assertError(over, 410, 'LINK_EXHAUSTED')
  assert.is(over.headers.get('vary'), 'Accept')
  assert.is((await call(srv.url, 'HEAD', `/r/${code}`)).status, 410)
  const page = await visit(srv, code, BROWSER)
  assert.is(page.status, 410)
  assert.match(page.text, /used up/)
  assertError(await call(srv.url, 'GET', `/r/${code}/preview`), 410, 'LINK_EXHAUSTED')
  // from the database as from the cache
  srv.service.deps.cache.invalidate(code)
  assertError(await visit(srv, code), 410, 'LINK_EXHAUSTED')
  await srv.service.deps.visits.flush()
  const got = await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })
  assert.equal([got.body.visits, got.body.max_visits, got.body.visits_left], [3, 3, 0], 'only the 302s were counted')
})

test('the cap holds exactly under concurrent visits', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: 'https://example.com/race', max_visits: 7 })
  const statuses = await Promise.all(Array.from({ length: 40 }, () => visit(srv, res.body.code).then((r) => r.status)))
  assert.is(statuses.filter((s) => s === 302).length, 7)
  assert.is(statuses.filter((s) => s === 410).length, 33)
})

test('PATCH max_visits: raising it allows the difference, null removes the cap, a new cap counts the visits made', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: 'https://example.com/more', max_visits: 1 })
  const code = res.body.code
  assert.is((await visit(srv, code)).status, 302)
  assert.is((await visit(srv, code)).status, 410)
  const raised = await patch(srv, user.token, code, { max_visits: 3 })
  assert.equal([raised.status, raised.body.max_visits, raised.body.visits_left], [200, 3, 2])
  assert.equal([(await visit(srv, code)).status, (await visit(srv, code)).status, (await visit(srv, code)).status], [302, 302, 410])
  const lowered = await patch(srv, user.token, code, { max_visits: 2 })
  assert.equal([lowered.body.visits_left, (await visit(srv, code)).status], [0, 410])
  const removed = await patch(srv, user.token, code, { max_visits: null })
  assert.equal([removed.body.max_visits, removed.body.visits_left], [null, null])
  await feedSettled(srv) // the PATCH's own notice, which empties the entry, is heard before the visit fills it
  assert.is((await visit(srv, code)).status, 302)
  assert.ok(typeof srv.service.deps.cache.get(code) === 'string', 'uncapped again: a plain Location in the cache')
  // 4 visits made (and flushed): a cap of 5 leaves 1
  await srv.service.deps.visits.flush()
  const capped = await patch(srv, user.token, code, { max_visits: 5 })
  assert.equal([capped.body.visits, capped.body.visits_left], [4, 1])
  assert.equal([(await visit(srv, code)).status, (await visit(srv, code)).status], [302, 410])
  assertFieldErrors(await patch(srv, user.token, code, { max_visits: 0 }), [['max_visits', 'INVALID']])
  assertFieldErrors(await patch(srv, user.token, code, {}), [['url', 'REQUIRED']])
})

test('a link without a cap is cached as a plain Location (no database on a hit); a capped one as Guarded', async ({ srv, user }) => {
  const plain = await newLink(srv.url, user.token, 'https://example.com/plain')
  const capped = (await create(srv, user.token, { url: 'https://example.com/capped', max_visits: 100 })).body
  await feedSettled(srv)
  assert.is((await visit(srv, plain.code)).status, 302)
  assert.is((await visit(srv, capped.code)).status, 302)
  assert.is(srv.service.deps.cache.get(plain.code), 'https://example.com/plain')
  assert.ok(srv.service.deps.cache.get(capped.code) instanceof Guarded)
})

/**
 * `loops` visitors per server, each visiting `code` every `gapMs` until it is answered 410 (and
 * `after` more times). Each answer with when its request was sent and when its answer came.
 */
async function visitUntilUsedUp(servers: TestServer[], code: string, loops: number, gapMs: number, after = 2) {
  const answers: { node: number; status: number; sent: number; got: number }[] = []
  await Promise.all(servers.flatMap((srv, node) => Array.from({ length: loops }, async () => {
    let refused = 0
    while (refused <= after) {
      const sent = performance.now()
      const { status } = await visit(srv, code)
      answers.push({ node, status, sent, got: performance.now() })
      if (status === 410) refused++
      else assert.is(status, 302)
      await sleep(gapMs)
    }
  })))
  return answers
}

/** `loops` visitors each visiting `code` every `gapMs` for `ms`, every answer a 302: how many were made. */
async function visitFor(srv: TestServer, code: string, loops: number, gapMs: number, ms: number): Promise<number> {
  let made = 0
  const stop = performance.now() + ms
  await Promise.all(Array.from({ length: loops }, async () => {
    while (performance.now() < stop) {
      assert.is((await visit(srv, code)).status, 302)
      made++
      await sleep(gapMs)
    }
  }))
  return made
}

test('a busy capped link is answered from blocks of visits: exactly max_visits 302s, and what a block did not use is given back', async ({ srv, user }) => {
  const code = (await create(srv, user.token, { url: 'https://example.com/busy', max_visits: 600 })).body.code
  const before = srv.service.deps.caps.statements
  const answers = await visitUntilUsedUp([srv], code, 8, 15)
  const served = answers.filter((a) => a.status === 302).length
  assert.is(served, 600)
  assert.ok(srv.service.deps.caps.statements - before < served / 10, `blocks: ${srv.service.deps.caps.statements - before} statements for ${served} visits`)
  // Given back: a higher cap shows the visits not made as left (the held ones too, once returned).
  const busy = (await create(srv, user.token, { url: 'https://example.com/busy-2', max_visits: 100_000 })).body.code
  const made = await visitFor(srv, busy, 8, 5, 1_600)
  const held = srv.service.deps.caps.held(busy)
  assert.ok(held > 0, 'a block is held while the link is busy')
  // A HEAD is answered from the block too, and takes no visit of it.
  assert.is((await call(srv.url, 'HEAD', `/r/${busy}`)).status, 302)
  assert.is(srv.service.deps.caps.held(busy), held, 'the HEAD took no visit')
  // The owner reads what is left at once: the database's count and this node's block.
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${busy}`, { token: user.token })).body.visits_left, 100_000 - made)
  const { sql } = srv.service.deps
  // Half a second after its last use the block is given back, and the hold ends.
  await until(3_000, async () => (await sql`select * from link_cap_holds where code = ${busy}`).length === 0)
  assert.is(Number((await sql`select visits_left from link_caps where code = ${busy}`)[0]!.visits_left), 100_000 - made)
})

test('a capped link at 0 while another node holds visits of it is not used up: a node that loads it then waits for them', async ({ srv, user }) => {
  const code = (await create(srv, user.token, { url: 'https://example.com/held-elsewhere', max_visits: 40 })).body.code
  const { sql } = srv.service.db
  // Another node took every visit left and still holds 3 of them (a node's block, sql/0029_cap_holds.sql).
  await sql`update link_caps set visits_left = 0 where code = ${code}`
  await sql`insert into link_cap_holds (code, node, held, until) values (${code}, 'elsewhere', 3, now() + interval '3 seconds')`
  srv.service.deps.cache.invalidate(code)
  assert.is((await call(srv.url, 'GET', `/r/${code}/preview`)).status, 200, 'the preview does not call it used up')
  const waiting = visit(srv, code)
  await sleep(200)
  // The holder gives its 3 back, as a node does when asked on the cap channel.
  await sql`select * from take_cap_visits('elsewhere', ${[code]}::text[], '{3}'::int[], '{0}'::int[], '{0}'::int[], 3000, 'unused')`
  const r = await waiting
  assert.equal([r.status, r.headers.get('location')], [302, 'https://example.com/held-elsewhere'], 'answered from the visits given back, not 410')
  assert.is((await visit(srv, code)).status, 302)
  assert.is((await visit(srv, code)).status, 302)
  assertError(await visit(srv, code), 410, 'LINK_EXHAUSTED')
})

test('bulk create refuses starts_at and max_visits per item, and creates the others', async ({ srv, user }) => {
  const res = await call(srv.url, 'POST', '/api/v1/links/bulk', {
    token: user.token,
    body: { items: [{ url: 'https://example.com/a', max_visits: 2 }, { url: 'https://example.com/b' }, { url: 'https://example.com/c', starts_at: inMs(60_000) }] },
  })
  assert.is(res.status, 200, res.text)
  assert.equal(res.body.results.map((r: { status: number }) => r.status), [422, 201, 422])
  assert.is(res.body.results[0].error.errors[0].field, 'max_visits')
  assert.is(res.body.results[2].error.errors[0].field, 'starts_at')
})

test.run()

// Every node takes from the one count in the database; a change reaches caches through the feed.
if (process.env.DATABASE_URL !== undefined) {
  const nodes = twoNodeSuite('visit caps on two nodes')
  nodes('a cap of 6 serves exactly 6 redirects across two nodes; raising it on A reaches B, which had it used up', async ({ a, b }) => {
    const user = await newUser(a.url)
    const code = (await create(a, user.token, { url: 'https://example.com/two', max_visits: 6 })).body.code
    await Promise.all([feedSettled(a), feedSettled(b)])
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => visit(i % 2 === 0 ? a : b, code).then((r) => r.status)))
    assert.is(statuses.filter((s) => s === 302).length, 6)
    assert.is((await visit(b, code)).status, 410)
    const raised = await patch(a, user.token, code, { max_visits: 7 })
    assert.equal([raised.status, raised.body.visits_left], [200, 1], 'the refused takes took nothing')
    await until(3_000, async () => (await visit(b, code)).status === 302)
    assert.is((await visit(a, code)).status, 410)
  })
  nodes.run()

  // Three nodes busy on one link take it by blocks; one that finds the count at 0 while another
  // holds visits waits for them: no 410 before the last visit is used, no 302 after.
  const three = suite<{ nodes: TestServer[] }>('visit caps on three nodes')
  three.before(async (ctx) => {
    ctx.nodes = await Promise.all([startServer(), startServer(), startServer()])
  })
  three.after(async (ctx) => {
    await Promise.all(ctx.nodes.map((srv) => srv?.close()))
  })
  three('a cap of 1,000 visited on three nodes at once serves exactly 1,000; once any node answered 410, no request sent later gets a 302', async ({ nodes }) => {
    const user = await newUser(nodes[0]!.url)
    const code = (await create(nodes[0]!, user.token, { url: 'https://example.com/three', max_visits: 1_000 })).body.code
    await Promise.all(nodes.map(feedSettled))
    const before = nodes.map((n) => n.service.deps.caps.statements)
    const answers = await visitUntilUsedUp(nodes, code, 6, 40)
    assert.is(answers.filter((a) => a.status === 302).length, 1_000)
    const firstRefusal = Math.min(...answers.filter((a) => a.status === 410).map((a) => a.got))
    const late = answers.filter((a) => a.status === 302 && a.sent > firstRefusal)
    assert.is(late.length, 0, `302s sent after the first 410 came back: ${JSON.stringify(late.slice(0, 3))}`)
    const statements = nodes.reduce((n, srv, i) => n + srv.service.deps.caps.statements - before[i]!, 0)
    assert.ok(statements < 500, `blocks: ${statements} statements for 1,000 visits`)
    const got = await call(nodes[1]!.url, 'GET', `/api/v1/links/${code}`, { token: user.token })
    assert.is(got.body.visits_left, 0)
  })
  three('a node that finds the count used up while another holds visits of it waits for them rather than answering 410', async ({ nodes }) => {
    const [a, b] = nodes as [TestServer, TestServer]
    const user = await newUser(a.url)
    const code = (await create(a, user.token, { url: 'https://example.com/held', max_visits: 400 })).body.code
    await Promise.all(nodes.map(feedSettled))
    // A is busy long enough to take blocks, then B alone uses up the count at once, while A still
    // holds the rest of its last block (a hold is given back half a second after its last use).
    let served = await visitFor(a, code, 4, 20, 1_400)
    const answers = await visitUntilUsedUp([b], code, 8, 0, 0)
    served += answers.filter((x) => x.status === 302).length
    assert.is(served, 400, 'B was answered every visit A held')
    await sleep(800) // anything A still held would be back by now
    assert.equal([(await visit(a, code)).status, (await visit(b, code)).status], [410, 410])
  })
  three.run()
}
