// POST /api/v1/links/bulk: up to 50 items created in one call, one result per item in order;
// the 50-link cap across the batch; atomic: all or nothing.
import * as assert from 'uvu/assert'
import { assertError, call, newLink, newUser } from '../helpers/api.js'
import { serverSuite } from '../helpers/server.js'

// Checks off: 'a batch is one statement' counts the database's statements, and the checker woken
// by each batch claims its new links with statements of its own.
const test = serverSuite('bulk create', { LINK_CHECKS: 'off' })

const bulk = (url: string, token: string, body: unknown) => call(url, 'POST', '/api/v1/links/bulk', { token, body })

test('3 valid items and 1 invalid answer 201, 201, 201 and 422, in order', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await bulk(srv.url, user.token, {
    items: [{ url: 'https://example.com/1' }, { url: 'https://example.com/2', code: 'BulkCode' }, { url: 'not a url' }, { url: 'https://example.com/4', expires_at: '2099-01-01T00:00:00Z' }],
  })
  assert.is(res.status, 200)
  assert.equal(res.body.results.map((r: any) => r.status), [201, 201, 422, 201])
  assert.is(res.body.results[1].link.code, 'BulkCode')
  assert.is(res.body.results[2].error.code, 'INVALID_FORM_BODY')
  assert.is(res.body.results[2].error.errors[0].field, 'url')
  assert.is(res.body.results[3].link.expires_at, '2099-01-01T00:00:00.000Z')
  const list = await call(srv.url, 'GET', '/api/v1/links', { token: user.token })
  assert.is(list.body.links.length, 3)
  // Each created link redirects at once.
  const r = await call(srv.url, 'HEAD', `/r/${res.body.results[0].link.code}`)
  assert.is(r.status, 302)
})

test('3 valid items then 1 invalid answer 201, 201, 201 and 422, in order', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await bulk(srv.url, user.token, { items: [1, 2, 3].map((i) => ({ url: `https://example.com/${i}` })).concat({ url: 'ftp://example.com/' }) })
  assert.equal(res.body.results.map((r: any) => r.status), [201, 201, 201, 422])
  assert.equal(res.body.results.slice(0, 3).map((r: any) => r.link.url), ['https://example.com/1', 'https://example.com/2', 'https://example.com/3'])
})

test('the 50-link cap holds across the batch: the items past it get LINK_LIMIT_EXCEEDED', async ({ srv }) => {
  const user = await newUser(srv.url)
  for (let i = 0; i < 48; i++) await newLink(srv.url, user.token)
  const res = await bulk(srv.url, user.token, { items: [0, 1, 2, 3].map((i) => ({ url: `https://example.com/${i}` })) })
  assert.equal(res.body.results.map((r: any) => r.status), [201, 201, 409, 409])
  assert.is(res.body.results[3].error.code, 'LINK_LIMIT_EXCEEDED')
})

test('a code taken (before, or earlier in the batch) is 409 CODE_TAKEN for that item only', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await bulk(srv.url, user.token, { items: [{ url: 'https://example.com/a', code: 'SameCode' }, { url: 'https://example.com/b', code: 'SameCode' }, { url: 'https://example.com/c' }] })
  assert.equal(res.body.results.map((r: any) => r.status), [201, 409, 201])
  assert.is(res.body.results[1].error.code, 'CODE_TAKEN')
})

test('atomic: one failure and nothing is created; the others answer 424 BATCH_ABORTED', async ({ srv }) => {
  const user = await newUser(srv.url)
  await bulk(srv.url, user.token, { items: [{ url: 'https://example.com/x', code: 'TakenOne' }] })
  const taken = await bulk(srv.url, user.token, { atomic: true, items: [{ url: 'https://example.com/1' }, { url: 'https://example.com/2', code: 'TakenOne' }] })
  assert.equal(taken.body.results.map((r: any) => r.status), [424, 409])
  assert.is(taken.body.results[0].error.code, 'BATCH_ABORTED')
  const invalid = await bulk(srv.url, user.token, { atomic: true, items: [{ url: 'https://example.com/1' }, { url: '' }] })
  assert.equal(invalid.body.results.map((r: any) => r.status), [424, 422])
  assert.is((await call(srv.url, 'GET', '/api/v1/links', { token: user.token })).body.links.length, 1)
  const fine = await bulk(srv.url, user.token, { atomic: true, items: [{ url: 'https://example.com/1' }, { url: 'https://example.com/2' }] })
  assert.equal(fine.body.results.map((r: any) => r.status), [201, 201])
  assert.is((await call(srv.url, 'GET', '/api/v1/links', { token: user.token })).body.links.length, 3)
})

test('the batch itself: items required, 1 to 50 of them, objects; atomic a boolean; a session needed', async ({ srv }) => {
  const user = await newUser(srv.url)
  assertError(await bulk(srv.url, user.token, {}), 422, 'INVALID_FORM_BODY')
  assertError(await bulk(srv.url, user.token, { items: [] }), 422, 'INVALID_FORM_BODY')
  const many = await bulk(srv.url, user.token, { items: Array.from({ length: 51 }, () => ({ url: 'https://example.com/' })) })
  assertError(many, 422, 'INVALID_FORM_BODY')
  assert.is(many.body.errors[0].code, 'TOO_LONG')
  assertError(await bulk(srv.url, user.token, { items: [{ url: 'https://example.com/' }], atomic: 'yes' }), 422, 'INVALID_FORM_BODY')
  const notObject = await bulk(srv.url, user.token, { items: ['https://example.com/'] })
  assert.is(notObject.body.results[0].status, 422)
  assertError(await bulk(srv.url, undefined as unknown as string, { items: [{ url: 'https://example.com/' }] }), 401, 'UNAUTHORIZED')
})

test('a batch is one statement', async ({ srv }) => {
  const user = await newUser(srv.url)
  await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token }) // the session is now cached
  let fewest = Infinity
  for (let i = 0; i < 3; i++) {
    const before = srv.service.db.statements()
    const res = await bulk(srv.url, user.token, { items: Array.from({ length: 10 }, (_, j) => ({ url: `https://example.com/${i}/${j}` })) })
    assert.is(res.status, 200)
    fewest = Math.min(fewest, srv.service.db.statements() - before)
  }
  assert.is(fewest, 1)
})

test.run()

// The creation limit, as single creates know it: a bucket of 5 here, refilled at 5 a minute, so
// that a batch meets it before the cap.
const limited = serverSuite('bulk create under the creation limit', { LINK_CREATE_PER_MINUTE: '5', LINK_CREATE_BURST: '5' })

limited('each item counts as one create: the items past the limit answer 429 with retry_after, the ones before are created', async ({ srv }) => {
  const user = await newUser(srv.url)
  assert.is((await newLink(srv.url, user.token)).code.length, 8) // one of the 5 taken by a single create
  const res = await bulk(srv.url, user.token, { items: [1, 2, 3, 4, 5, 6].map((i) => ({ url: `https://example.com/${i}` })).concat({ url: 'bad' } as any) })
  assert.is(res.status, 200)
  assert.equal(res.body.results.map((r: any) => r.status), [201, 201, 201, 201, 429, 429, 422])
  const refused = res.body.results[4]
  assert.is(refused.error.code, 'RATE_LIMIT_EXCEEDED')
  assert.ok(Number.isInteger(refused.retry_after) && refused.retry_after >= 1 && refused.retry_after <= 60, String(refused.retry_after))
  assert.is((await call(srv.url, 'GET', '/api/v1/links', { token: user.token })).body.links.length, 5)
  // The bulk's takes count for single creates too.
  const single = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/single' } })
  assertError(single, 429, 'RATE_LIMIT_EXCEEDED')
})

limited('an atomic batch past the limit creates nothing and takes no token: the next batch of five is created', async ({ srv }) => {
  const user = await newUser(srv.url)
  const items = [1, 2, 3, 4, 5, 6].map((i) => ({ url: `https://example.com/${i}` }))
  const res = await bulk(srv.url, user.token, { atomic: true, items })
  assert.equal(res.body.results.map((r: any) => r.status), [424, 424, 424, 424, 424, 429])
  assert.is((await call(srv.url, 'GET', '/api/v1/links', { token: user.token })).body.links.length, 0)
  assert.equal((await bulk(srv.url, user.token, { items: items.slice(0, 5) })).body.results.map((r: any) => r.status), [201, 201, 201, 201, 201])
})

limited('items refused for their host, their code or as invalid take no token', async ({ srv }) => {
  const user = await newUser(srv.url)
  const taken = await newLink(srv.url, user.token)
  const refused = Array.from({ length: 8 }, () => ({ url: 'https://example.com/', code: taken.code })).concat({ url: 'bad' } as any)
  assert.equal((await bulk(srv.url, user.token, { items: refused })).body.results.map((r: any) => r.status), [409, 409, 409, 409, 409, 409, 409, 409, 422])
  const items = [1, 2, 3, 4, 5].map((i) => ({ url: `https://example.com/${i}` }))
  assert.equal((await bulk(srv.url, user.token, { items })).body.results.map((r: any) => r.status), [201, 201, 201, 201, 429])
})

limited('each account has its own allowance', async ({ srv }) => {
  const [a, b] = await Promise.all([newUser(srv.url), newUser(srv.url)])
  const items = [1, 2, 3, 4, 5].map((i) => ({ url: `https://example.com/${i}` }))
  assert.equal((await bulk(srv.url, a.token, { items })).body.results.map((r: any) => r.status), [201, 201, 201, 201, 201])
  assert.equal((await bulk(srv.url, b.token, { items })).body.results.map((r: any) => r.status), [201, 201, 201, 201, 201])
})

limited.run()
