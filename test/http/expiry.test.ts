// Link expiry: expires_at on create and PATCH (a future RFC 3339 timestamp, or null to
// clear), returned with the link; after it /r/{code} answers 410 LINK_EXPIRED, the link stays
// listed and can be extended. The redirect cache and other nodes honour it without a read per redirect.
import * as assert from 'uvu/assert'
import { assertFieldErrors, call, newLink, newUser, type Res, type User } from '../helpers/api.js'
import { feedSettled, serverSuite, type TestServer, twoNodeSuite } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString()
const create = (srv: TestServer, token: string, body: unknown) => call(srv.url, 'POST', '/api/v1/links', { token, body })
const patch = (srv: TestServer, token: string, code: string, body: unknown) => call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token, body })

const test = serverSuite<{ user: User }>('link expiry')
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('expires_at is set on create, returned in the UTC millisecond form, and listed', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: 'https://example.com/', expires_at: '2099-06-01T12:30:00+02:00' })
  assert.is(res.status, 201, res.text)
  assert.is(res.body.expires_at, '2099-06-01T10:30:00.000Z')
  const listed = await call(srv.url, 'GET', '/api/v1/links', { token: user.token })
  assert.is(listed.body.links[0].expires_at, '2099-06-01T10:30:00.000Z')
  const none = await create(srv, user.token, { url: 'https://example.com/', expires_at: null })
  assert.is(none.body.expires_at, null)
})

test('expires_at must be a future RFC 3339 timestamp', async ({ srv, user }) => {
  const url = 'https://example.com/'
  assertFieldErrors(await create(srv, user.token, { url, expires_at: 1893456000 }), [['expires_at', 'TYPE']])
  for (const bad of ['2099-06-01', '2099-06-01 12:00:00Z', '2099-02-30T00:00:00Z', '2099-06-01T24:00:00Z', '2099-06-01T12:00:60Z', 'tomorrow', '2099-06-01T12:00:00+25:00']) {
    assertFieldErrors(await create(srv, user.token, { url, expires_at: bad }), [['expires_at', 'INVALID']])
  }
  const past = await create(srv, user.token, { url, expires_at: inMs(-1_000) })
  assertFieldErrors(past, [['expires_at', 'INVALID']])
  assert.match(past.body.errors[0].message, /future/)
})

test('an expired link answers 410 LINK_EXPIRED, from the database and from the cache, GET and HEAD', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: 'https://example.com/soon', expires_at: inMs(1_500) })
  const code = res.body.code
  await feedSettled(srv)
  assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 302)
  assert.ok(srv.service.deps.cache.get(code), 'cached with its expiry')
  await until(3_000, async () => (await call(srv.url, 'GET', `/r/${code}`)).status === 410)
  const cached = await call(srv.url, 'GET', `/r/${code}`)
  assert.is(cached.status, 410)
  assert.equal(cached.body, { code: 'LINK_EXPIRED', message: 'this link has expired' })
  srv.service.deps.cache.invalidate(code)
  const fromDb = await call(srv.url, 'GET', `/r/${code}`)
  assert.equal([fromDb.status, fromDb.text], [410, cached.text])
  assert.is((await call(srv.url, 'HEAD', `/r/${code}`)).status, 410)
  // it stays listed, and can be extended or cleared
  const got = await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })
  assert.is(got.status, 200)
  const extended = await patch(srv, user.token, code, { expires_at: inMs(3_600_000) })
  assert.is(extended.status, 200, extended.text)
  assert.is(extended.body.url, 'https://example.com/soon', 'url unchanged')
  assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 302)
  const cleared = await patch(srv, user.token, code, { expires_at: null })
  assert.is(cleared.body.expires_at, null)
})

test('PATCH takes url, expires_at or both; neither is 422 on url', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const both = await patch(srv, user.token, link.code, { url: 'https://example.org/', expires_at: '2099-01-01T00:00:00Z' })
  assert.equal([both.status, both.body.url, both.body.expires_at], [200, 'https://example.org/', '2099-01-01T00:00:00.000Z'])
  const urlOnly = await patch(srv, user.token, link.code, { url: 'https://example.net/' })
  assert.is(urlOnly.body.expires_at, '2099-01-01T00:00:00.000Z', 'an absent expires_at stays')
  assertFieldErrors(await patch(srv, user.token, link.code, {}), [['url', 'REQUIRED']])
  assertFieldErrors(await patch(srv, user.token, link.code, { url: null }), [['url', 'REQUIRED']])
  assertFieldErrors(await patch(srv, user.token, link.code, { expires_at: '2000-01-01T00:00:00Z' }), [['expires_at', 'INVALID']])
})

test.run()

// Other nodes honour a new expiry through the existing change notification
if (process.env.DATABASE_URL !== undefined) {
  const nodes = twoNodeSuite('expiry on two nodes')
  nodes('an expiry set on A is honoured by B, which had the link cached', async ({ a, b }) => {
    const user = await newUser(a.url)
    const link = await newLink(a.url, user.token)
    await feedSettled(b)
    assert.is((await call(b.url, 'GET', `/r/${link.code}`)).status, 302)
    assert.is((await patch(a, user.token, link.code, { expires_at: inMs(1_000) })).status, 200)
    await until(3_000, async () => (await call(b.url, 'GET', `/r/${link.code}`)).status === 410)
  })
  nodes.run()
}
