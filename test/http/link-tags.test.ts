// Tags and search (issue 25): up to 10 tags per link, 1-32 characters, case-insensitive;
// GET /api/v1/links?tag=&q= narrows the list; GET /api/v1/tags counts an owner's tags.
import * as assert from 'uvu/assert'
import { assertFieldErrors, assertQueryError, call, newUser, type User } from '../helpers/api.js'
import { serverSuite, type TestServer } from '../helpers/server.js'

const create = (srv: TestServer, token: string, body: unknown) => call(srv.url, 'POST', '/api/v1/links', { token, body })
const list = async (srv: TestServer, token: string, query: string) => {
  const res = await call(srv.url, 'GET', `/api/v1/links?${query}`, { token })
  assert.is(res.status, 200, res.text)
  return res.body.links.map((l: { url: string }) => l.url).sort()
}

const test = serverSuite<{ user: User }>('link tags and search')
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('tags are kept as written, once each whatever the case, and can be replaced or removed with PATCH', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: 'https://example.com/t', tags: ['Launch', 'launch', 'Q3 2026', 'émoji ✨'] })
  assert.is(res.status, 201, res.text)
  assert.equal(res.body.tags, ['Launch', 'Q3 2026', 'émoji ✨'])
  const code = res.body.code
  assert.equal((await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })).body.tags, ['Launch', 'Q3 2026', 'émoji ✨'])
  const replaced = await call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token: user.token, body: { tags: ['other'] } })
  assert.equal([replaced.status, replaced.body.tags, replaced.body.url], [200, ['other'], 'https://example.com/t'])
  const cleared = await call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token: user.token, body: { tags: null } })
  assert.equal(cleared.body.tags, [])
  assert.equal((await create(srv, user.token, { url: 'https://example.com/' })).body.tags, [])
})

test('at most 10 tags of 1 to 32 characters, strings without control characters or outer white space', async ({ srv, user }) => {
  const url = 'https://example.com/'
  assertFieldErrors(await create(srv, user.token, { url, tags: 'a' }), [['tags', 'TYPE']])
  assertFieldErrors(await create(srv, user.token, { url, tags: [1] }), [['tags', 'TYPE']])
  assertFieldErrors(await create(srv, user.token, { url, tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }), [['tags', 'TOO_LONG']])
  for (const bad of ['', 'x'.repeat(33), ' padded', 'tab\there', 'zero\u200bwidth']) {
    assertFieldErrors(await create(srv, user.token, { url, tags: [bad] }), [['tags', 'INVALID']], JSON.stringify(bad))
  }
  // 10 distinct ones after folding case: accepted
  const ten = await create(srv, user.token, { url, tags: [...Array.from({ length: 10 }, (_, i) => `t${i}`), 'T0'] })
  assert.is(ten.status, 201, ten.text)
  assert.is(ten.body.tags.length, 10)
  assert.is((await create(srv, user.token, { url, tags: ['x'.repeat(32)] })).status, 201)
})

test('?tag= filters the list case-insensitively; ?q= searches url, code and title; both together narrow further', async ({ srv }) => {
  const owner = await newUser(srv.url)
  await create(srv, owner.token, { url: 'https://shop.example/spring-sale', tags: ['Sale', 'spring'] })
  await create(srv, owner.token, { url: 'https://shop.example/autumn-sale', tags: ['sale'] })
  const custom = await create(srv, owner.token, { url: 'https://docs.example/guide', code: 'GuideAbC', tags: ['docs'], title: 'Getting Started' })
  assert.is(custom.status, 201, custom.text)
  assert.equal(await list(srv, owner.token, 'tag=SALE'), ['https://shop.example/autumn-sale', 'https://shop.example/spring-sale'])
  assert.equal(await list(srv, owner.token, 'tag=spring'), ['https://shop.example/spring-sale'])
  assert.equal(await list(srv, owner.token, 'tag=none'), [])
  assert.equal(await list(srv, owner.token, 'q=AUTUMN'), ['https://shop.example/autumn-sale'])
  assert.equal(await list(srv, owner.token, 'q=guideabc'), ['https://docs.example/guide'], 'the code, any case')
  assert.equal(await list(srv, owner.token, 'q=started'), ['https://docs.example/guide'], 'the preview title, any case')
  assert.equal(await list(srv, owner.token, 'q=%25'), [], 'a % is a character, not a wildcard')
  assert.equal(await list(srv, owner.token, 'tag=sale&q=spring'), ['https://shop.example/spring-sale'])
  assert.is((await list(srv, owner.token, '')).length, 3)
  assertQueryError(await call(srv.url, 'GET', `/api/v1/links?tag=${'x'.repeat(33)}`, { token: owner.token }), ['tag'])
  assertQueryError(await call(srv.url, 'GET', '/api/v1/links?tag=a&tag=b', { token: owner.token }), ['tag'])
})

test("GET /api/v1/tags lists the caller's tags once each, sorted, with their link counts; others' tags are not seen", async ({ srv }) => {
  const owner = await newUser(srv.url)
  const other = await newUser(srv.url)
  await create(srv, owner.token, { url: 'https://a.example/', tags: ['beta', 'Alpha'] })
  await create(srv, owner.token, { url: 'https://b.example/', tags: ['alpha'] })
  await create(srv, other.token, { url: 'https://c.example/', tags: ['secret'] })
  const res = await call(srv.url, 'GET', '/api/v1/tags', { token: owner.token })
  assert.is(res.status, 200, res.text)
  assert.equal(res.body.tags, [
    { tag: 'Alpha', links: 2 },
    { tag: 'beta', links: 1 },
  ])
  assert.is((await call(srv.url, 'GET', '/api/v1/tags')).status, 401)
  const empty = await call(srv.url, 'GET', '/api/v1/tags', { token: (await newUser(srv.url)).token })
  assert.equal(empty.body, { tags: [] })
})

test.run()
