// Creation limits (contract §4, docs/api.md "Rate limit"): on the defaults an account creates its
// 50 links in one go and a create past the cap is 409 whatever else limits creation. The limit is
// a bucket of LINK_CREATE_BURST (60) refilled at LINK_CREATE_PER_MINUTE (30), exact across nodes,
// a tenth of both for accounts younger than NEW_ACCOUNT_HOURS; only a link created takes a token.
// Also: no link to our own /r/ path.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { assertError, call, newLink, newUser, type User } from '../helpers/api.js'
import { serverSuite, startServer, type TestServer } from '../helpers/server.js'

const create = (srv: TestServer, user: User, body: Record<string, unknown> = { url: 'https://example.com/' }) =>
  call(srv.url, 'POST', '/api/v1/links', { token: user.token, body })
const remove = (srv: TestServer, user: User, code: string) => call(srv.url, 'DELETE', `/api/v1/links/${code}`, { token: user.token })
const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length

/** `n` creates at once, spread over `nodes`: their statuses, and the codes created. */
async function createAtOnce(nodes: TestServer[], user: User, n: number): Promise<{ statuses: number[]; codes: string[] }> {
  const answers = await Promise.all(Array.from({ length: n }, (_, i) => create(nodes[i % nodes.length]!, user)))
  return { statuses: answers.map((r) => r.status), codes: answers.filter((r) => r.status === 201).map((r) => r.body.code) }
}

// Every setting at its default: nothing here changes the creation limit.
const defaults = serverSuite('creation limits on the defaults')

defaults('an account creates its 50 links in a row, deletes one, creates one more, and the next create is 409 LINK_LIMIT_EXCEEDED', async ({ srv }) => {
  const user = await newUser(srv.url)
  const codes: string[] = []
  for (let i = 0; i < 50; i++) {
    const res = await create(srv, user, { url: `https://example.com/${i}` })
    assert.is(res.status, 201, `create ${i + 1}: ${res.text}`)
    codes.push(res.body.code)
  }
  assert.is((await remove(srv, user, codes[0]!)).status, 204)
  assert.is((await create(srv, user)).status, 201)
  const past = await create(srv, user)
  assertError(past, 409, 'LINK_LIMIT_EXCEEDED')
})

defaults('100 parallel creates by one account give exactly 50 × 201 and 50 × 409 LINK_LIMIT_EXCEEDED', async ({ srv }) => {
  const user = await newUser(srv.url)
  const { statuses } = await createAtOnce([srv], user, 100)
  assert.equal([count(statuses, 201), count(statuses, 409)], [50, 50])
  assert.is((await call(srv.url, 'GET', '/api/v1/links', { token: user.token })).body.links.length, 50)
})

defaults('creates refused by the cap take no token: after 100 × 409, five deleted links are made again at once', async ({ srv }) => {
  const user = await newUser(srv.url)
  const { codes } = await createAtOnce([srv], user, 50)
  const refused = await createAtOnce([srv], user, 100)
  assert.is(count(refused.statuses, 409), 100)
  // Had the 100 refusals counted, the bucket (60) would be empty and these would wait 2 s each.
  for (const code of codes.slice(0, 5)) assert.is((await remove(srv, user, code)).status, 204)
  const again = await createAtOnce([srv], user, 5)
  assert.equal(again.statuses, Array(5).fill(201))
})

defaults('a create that fails validation, has a blocked host or loses its code takes no token', async ({ srv }) => {
  const user = await newUser(srv.url)
  const taken = await newLink(srv.url, user.token)
  for (let i = 0; i < 40; i++) {
    assert.is((await create(srv, user, { url: 'not a url' })).status, 422)
    assertError(await create(srv, user, { url: 'https://example.com/', code: taken.code }), 409, 'CODE_TAKEN')
  }
  // 81 creates sent, one link made: 49 more fit in the burst of 60 at once.
  const { statuses } = await createAtOnce([srv], user, 49)
  assert.equal(statuses, Array(49).fill(201))
})

defaults('the limit is the account\'s: another account creates meanwhile', async ({ srv }) => {
  const user = await newUser(srv.url)
  await createAtOnce([srv], user, 50)
  const other = await newUser(srv.url)
  assert.is((await create(srv, other)).status, 201)
})

defaults('a url that leads to one of our own short links is 422 on the url field, on create and on PATCH', async ({ srv }) => {
  const user = await newUser(srv.url)
  const base = srv.service.deps.baseUrl
  const own = new URL(base)
  const target = await newLink(srv.url, user.token)
  for (const url of [`${base}/r/${target.code}`, `https://${own.host.toUpperCase()}/r/${target.code}/preview`, `http://${own.hostname}:1/r/x`]) {
    const res = await create(srv, user, { url })
    assert.equal([res.status, res.body.code, res.body.errors?.[0]?.field, res.body.errors?.[0]?.code], [422, 'INVALID_FORM_BODY', 'url', 'INVALID'], url)
    assert.match(res.body.errors[0].message, /must not point at a short link of this service/)
    const patched = await call(srv.url, 'PATCH', `/api/v1/links/${target.code}`, { token: user.token, body: { url } })
    assert.is(patched.status, 422, url)
  }
  // Our host elsewhere than /r/, and /r/ on another host, are ordinary targets.
  assert.is((await create(srv, user, { url: `${base}/app/` })).status, 201)
  assert.is((await create(srv, user, { url: `https://other.example/r/${target.code}` })).status, 201)
})

defaults.run()

/**
 * `n` creates at once and one more, on a fresh account; the bucket refills continuously (here one
 * every 2 s), so only a burst that ends within 2 s of its start proves the count: a slower one (a
 * busy machine) is tried again with a fresh account.
 */
async function burstThenOne(nodes: TestServer[], n: number): Promise<{ statuses: number[]; last: Awaited<ReturnType<typeof create>> }> {
  for (let attempt = 1; ; attempt++) {
    const user = await newUser(nodes[0]!.url)
    const started = performance.now()
    const { statuses } = await createAtOnce(nodes, user, n)
    const last = await create(nodes[n % nodes.length]!, user)
    if (performance.now() - started < 1_900 || attempt === 5) return { statuses, last }
  }
}

// A bucket the size of the refill, to see the 429 (the defaults' 60 are past the cap).
const THIRTY = { LINK_CREATE_PER_MINUTE: '30', LINK_CREATE_BURST: '30' }
const small = serverSuite('creation limits with LINK_CREATE_PER_MINUTE=30 LINK_CREATE_BURST=30', THIRTY)

small('the 31st create in a minute answers 429 RATE_LIMIT_EXCEEDED with Retry-After', async ({ srv }) => {
  const { statuses, last } = await burstThenOne([srv], 30)
  assert.equal(statuses, Array(30).fill(201))
  assertError(last, 429, 'RATE_LIMIT_EXCEEDED')
  const retry = Number(last.headers.get('retry-after'))
  assert.ok(retry >= 1 && retry <= 2, `Retry-After ${retry}`)
})

small.run()

// Young accounts get a tenth of both: a bucket of 6 (LINK_CREATE_BURST 60), refilled at 3 a minute.
const young = serverSuite('new accounts (NEW_ACCOUNT_HOURS=1)', { NEW_ACCOUNT_HOURS: '1' })

young('an account younger than NEW_ACCOUNT_HOURS creates a tenth of LINK_CREATE_BURST at once; an older one the whole', async ({ srv }) => {
  const fresh = await newUser(srv.url)
  const statuses = []
  for (let i = 0; i < 7; i++) statuses.push((await create(srv, fresh)).status)
  assert.equal(statuses, [201, 201, 201, 201, 201, 201, 429])
  const older = await newUser(srv.url)
  await srv.service.db.sql`update users set created_at = now() - interval '2 hours' where id = ${older.id}`
  const { statuses: many } = await createAtOnce([srv], older, 50)
  assert.equal(many, Array(50).fill(201))
})

young.run()

if (process.env.DATABASE_URL !== undefined) {
  const nodes = suite<{ a: TestServer; b: TestServer; c: TestServer; d: TestServer }>('creation limits on two nodes')
  nodes.before(async (ctx) => {
    ;[ctx.a, ctx.b, ctx.c, ctx.d] = await Promise.all([startServer(), startServer(), startServer(THIRTY), startServer(THIRTY)])
  })
  nodes.after(async (ctx) => {
    await Promise.all([ctx.a, ctx.b, ctx.c, ctx.d].map((s) => s?.close()))
  })
  nodes('on the defaults, 100 parallel creates spread over two nodes give exactly 50 × 201 and 50 × 409', async ({ a, b }) => {
    const user = await newUser(a.url)
    const { statuses } = await createAtOnce([a, b], user, 100)
    assert.equal([count(statuses, 201), count(statuses, 409)], [50, 50])
  })
  nodes('30 creates spread over two nodes use up a bucket of 30: the 31st, on either, answers 429', async ({ c, d }) => {
    const { statuses, last } = await burstThenOne([c, d], 30)
    assert.equal(statuses, Array(30).fill(201))
    assert.is(last.status, 429)
  })
  nodes.run()
}
