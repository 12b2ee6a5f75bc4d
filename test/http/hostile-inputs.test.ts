// What a hostile campaign found in the newer features, each held to its rule: a query with U+0000,
// a report on a link before its start, a card image on a blocked host, and a link password's
// hashing before the cap, the creation limit or a limit of password changes.
import * as assert from 'uvu/assert'
import { blockHost, unblockHost } from '../../src/admin/blocks.js'
import { assertError, call, newLink, newUser, uniqueName, type User } from '../helpers/api.js'
import { serverSuite } from '../helpers/server.js'

const test = serverSuite<{ user: User }>('hostile inputs')
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('a query parameter holding U+0000 is 422 INVALID_QUERY, not a database error', async ({ srv, user }) => {
  for (const path of ['/api/v1/links?q=%00', '/api/v1/links?q=a%00b', '/api/v1/links?tag=x%00']) {
    const res = await call(srv.url, 'GET', path, { token: user.token })
    assertError(res, 422, 'INVALID_QUERY', path)
  }
})

test('a report on a link before its starts_at is 404, as for an unknown code; after its start it is taken', async ({ srv, user }) => {
  const starts = new Date(Date.now() + 86_400_000).toISOString()
  const later = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/', starts_at: starts } })
  const report = (code: string) => call(srv.url, 'POST', '/api/v1/reports', { body: { code, reason: 'spam' } })
  assertError(await report(later.body.code), 404, 'LINK_NOT_FOUND')
  assertError(await report('Zz9Zz9Zz'), 404, 'LINK_NOT_FOUND')
  const now = await newLink(srv.url, user.token)
  assert.is((await report(now.code)).status, 202)
})

test('a card image on a blocked host is 422 URL_BLOCKED on image_url, on create and on PATCH', async ({ srv, user }) => {
  const host = `${uniqueName('img')}.example`
  await blockHost(srv.service.db.sql, host)
  try {
    const created = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/', title: 'T', image_url: `https://cdn.${host}/a.png` } })
    assert.equal([created.status, created.body.code, created.body.errors.map((e: { field: string }) => e.field)], [422, 'URL_BLOCKED', ['image_url']])
    const link = await newLink(srv.url, user.token)
    const patched = await call(srv.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body: { image_url: `https://${host}/a.png` } })
    assert.equal([patched.status, patched.body.code], [422, 'URL_BLOCKED'])
    assert.is((await call(srv.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body: { image_url: 'https://images.example/a.png' } })).status, 200)
  } finally {
    await unblockHost(srv.service.db.sql, host)
  }
})

test('a create with a password at the cap is 409 before its password is hashed', async ({ srv }) => {
  const owner = await newUser(srv.url)
  await Promise.all(Array.from({ length: 50 }, () => newLink(srv.url, owner.token)))
  const res = await call(srv.url, 'POST', '/api/v1/links', { token: owner.token, body: { url: 'https://example.com/', password: 'open sesame' } })
  assertError(res, 409, 'LINK_LIMIT_EXCEEDED')
})

test('a link\'s password set by PATCH: twenty at once per account, then 429 with Retry-After before hashing', async ({ srv }) => {
  const owner = await newUser(srv.url)
  const link = await newLink(srv.url, owner.token)
  const statuses: number[] = []
  for (let i = 0; i < 21; i++) statuses.push((await call(srv.url, 'PATCH', `/api/v1/links/${link.code}`, { token: owner.token, body: { password: `password number ${i}` } })).status)
  assert.equal(statuses, [...Array(20).fill(200), 429])
  // Other changes are not limited by it.
  assert.is((await call(srv.url, 'PATCH', `/api/v1/links/${link.code}`, { token: owner.token, body: { title: 'still editable' } })).status, 200)
})

test.run()
