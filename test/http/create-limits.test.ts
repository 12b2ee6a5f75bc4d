// Creation limits: LINK_CREATE_PER_MINUTE per account (30 by default, the same across nodes),
// a tenth of it for accounts younger than NEW_ACCOUNT_HOURS, and no link to our own /r/ path.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, type User } from '../helpers/api.js'
import { serverSuite, startServer, type TestServer } from '../helpers/server.js'

const create = (srv: TestServer, user: User, url = 'https://example.com/') => call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url } })

/**
 * `n` creates at once and one more; the bucket refills continuously (30 a minute: one every 2 s),
 * so only a burst that ends within 2 s of its start proves the count: a slower one (a busy
 * machine) is tried again with a fresh account.
 */
async function burstThenOne(nodes: TestServer[], n: number): Promise<{ statuses: number[]; last: Awaited<ReturnType<typeof create>> }> {
  for (let attempt = 1; ; attempt++) {
    const user = await newUser(nodes[0]!.url)
    const started = performance.now()
    const statuses = (await Promise.all(Array.from({ length: n }, (_, i) => create(nodes[i % nodes.length]!, user)))).map((r) => r.status)
    const last = await create(nodes[n % nodes.length]!, user)
    if (performance.now() - started < 1_900 || attempt === 5) return { statuses, last }
  }
}

const test = serverSuite('links created per minute (the default, 30)', { LINK_CREATE_PER_MINUTE: '' })

test('the 31st create in a minute answers 429 RATE_LIMIT_EXCEEDED with Retry-After', async ({ srv }) => {
  const { statuses, last } = await burstThenOne([srv], 30)
  assert.equal(statuses, Array(30).fill(201))
  assert.equal([last.status, last.body.code], [429, 'RATE_LIMIT_EXCEEDED'])
  const retry = Number(last.headers.get('retry-after'))
  assert.ok(retry >= 1 && retry <= 2, `Retry-After ${retry}`)
})

test('the limit is the account\'s: another account creates meanwhile', async ({ srv }) => {
  await burstThenOne([srv], 30)
  const other = await newUser(srv.url)
  assert.is((await create(srv, other)).status, 201)
})

test('a url that leads to one of our own short links is 422 on the url field, on create and on PATCH', async ({ srv }) => {
  const user = await newUser(srv.url)
  const base = srv.service.deps.baseUrl
  const own = new URL(base)
  const target = await newLink(srv.url, user.token)
  for (const url of [`${base}/r/${target.code}`, `https://${own.host.toUpperCase()}/r/${target.code}/preview`, `http://${own.hostname}:1/r/x`]) {
    const res = await create(srv, user, url)
    assert.equal([res.status, res.body.code, res.body.errors?.[0]?.field, res.body.errors?.[0]?.code], [422, 'INVALID_FORM_BODY', 'url', 'INVALID'], url)
    assert.match(res.body.errors[0].message, /must not point at a short link of this service/)
    const patched = await call(srv.url, 'PATCH', `/api/v1/links/${target.code}`, { token: user.token, body: { url } })
    assert.is(patched.status, 422, url)
  }
  // Our host elsewhere than /r/, and /r/ on another host, are ordinary targets.
  assert.is((await create(srv, user, `${base}/app/`)).status, 201)
  assert.is((await create(srv, user, `https://other.example/r/${target.code}`)).status, 201)
})

test.run()

const young = serverSuite('new accounts (NEW_ACCOUNT_HOURS=1)', { LINK_CREATE_PER_MINUTE: '30', NEW_ACCOUNT_HOURS: '1' })

young('an account younger than NEW_ACCOUNT_HOURS creates a tenth of LINK_CREATE_PER_MINUTE; an older one the whole', async ({ srv }) => {
  const fresh = await newUser(srv.url)
  const statuses = []
  for (let i = 0; i < 4; i++) statuses.push((await create(srv, fresh)).status)
  assert.equal(statuses, [201, 201, 201, 429])
  const older = await newUser(srv.url)
  await srv.service.db.sql`update users set created_at = now() - interval '2 hours' where id = ${older.id}`
  const many = await Promise.all(Array.from({ length: 10 }, () => create(srv, older)))
  assert.equal(many.map((r) => r.status), Array(10).fill(201))
})

young.run()

if (process.env.DATABASE_URL !== undefined) {
  const nodes = suite<{ a: TestServer; b: TestServer }>('links created per minute on two nodes')
  nodes.before(async (ctx) => {
    ;[ctx.a, ctx.b] = await Promise.all([startServer({ LINK_CREATE_PER_MINUTE: '' }), startServer({ LINK_CREATE_PER_MINUTE: '' })])
  })
  nodes.after(async (ctx) => {
    await Promise.all([ctx.a, ctx.b].map((s) => s?.close()))
  })
  nodes('30 creates spread over two nodes use up the minute: the 31st, on either, answers 429', async ({ a, b }) => {
    const { statuses, last } = await burstThenOne([a, b], 30)
    assert.equal(statuses, Array(30).fill(201))
    assert.is(last.status, 429)
  })
  nodes.run()
}
