// Idempotency-Key on the routes that create (POST links, links/bulk, users, webhooks and their
// test and retry): the same key and request answer the first result for 24 hours, on every node;
// the same key with another request is 422 IDEMPOTENCY_KEY_REUSED. On both engines.
import { randomUUID } from 'node:crypto'
import * as assert from 'uvu/assert'
import { assertError, call, newUser, uniqueName, type User } from '../helpers/api.js'
import { serverSuite, twoNodeSuite } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

const test = serverSuite<{ user: User }>('Idempotency-Key')
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

const keyed = (key: string) => ({ 'idempotency-key': key })
const linkCount = async (base: string, token: string) => (await call(base, 'GET', '/api/v1/links', { token })).body.links.length as number

test('the same key and body answer the first result again, marked Idempotent-Replayed; one link exists', async ({ srv, user }) => {
  const before = await linkCount(srv.url, user.token)
  const key = randomUUID()
  const first = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/once' }, headers: keyed(key) })
  assert.is(first.status, 201)
  assert.is(first.headers.get('idempotent-replayed'), null)
  const again = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/once' }, headers: keyed(key) })
  assert.is(again.status, 201)
  assert.equal(again.body, first.body)
  assert.is(again.headers.get('location'), first.headers.get('location'))
  assert.is(again.headers.get('idempotent-replayed'), 'true')
  assert.ok(again.headers.get('x-request-id'), 'a replay has its own request id')
  assert.is(await linkCount(srv.url, user.token), before + 1)
})

test('the key may be sent as a structured-field string ("...")', async ({ srv, user }) => {
  const key = randomUUID()
  const first = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/sf' }, headers: keyed(`"${key}"`) })
  const again = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/sf' }, headers: keyed(key) })
  assert.is(again.headers.get('idempotent-replayed'), 'true')
  assert.is(again.body.code, first.body.code)
})

test('the same key with another body, or on another route, is 422 IDEMPOTENCY_KEY_REUSED and creates nothing', async ({ srv, user }) => {
  const key = randomUUID()
  assert.is((await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/a' }, headers: keyed(key) })).status, 201)
  const before = await linkCount(srv.url, user.token)
  const other = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/b' }, headers: keyed(key) })
  assertError(other, 422, 'IDEMPOTENCY_KEY_REUSED')
  const bulk = await call(srv.url, 'POST', '/api/v1/links/bulk', { token: user.token, body: { items: [{ url: 'https://example.com/a' }] }, headers: keyed(key) })
  assertError(bulk, 422, 'IDEMPOTENCY_KEY_REUSED')
  assert.is(await linkCount(srv.url, user.token), before)
})

test('keys belong to an account: another account with the same key creates its own link', async ({ srv, user }) => {
  const key = randomUUID()
  const other = await newUser(srv.url)
  const mine = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/k' }, headers: keyed(key) })
  const theirs = await call(srv.url, 'POST', '/api/v1/links', { token: other.token, body: { url: 'https://example.com/k' }, headers: keyed(key) })
  assert.is(theirs.status, 201)
  assert.is(theirs.headers.get('idempotent-replayed'), null)
  assert.is.not(theirs.body.code, mine.body.code)
})

test('twenty requests at once with one key create one link and all answer it', async ({ srv, user }) => {
  const before = await linkCount(srv.url, user.token)
  const key = randomUUID()
  const all = await Promise.all(Array.from({ length: 20 }, () =>
    call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/race' }, headers: keyed(key) })))
  assert.equal([...new Set(all.map((r) => r.status))], [201])
  assert.is(new Set(all.map((r) => r.body.code)).size, 1)
  assert.is(all.filter((r) => r.headers.get('idempotent-replayed') === 'true').length, 19)
  assert.is(await linkCount(srv.url, user.token), before + 1)
})

test('a request whose answer the client never read is not done twice: the retry with its key gets the first result', async ({ srv, user }) => {
  const before = await linkCount(srv.url, user.token)
  const key = randomUUID()
  const gone = new AbortController()
  const lost = call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/lost' }, headers: keyed(key), signal: gone.signal })
  setTimeout(() => gone.abort(), 5)
  await lost.catch(() => undefined)
  await until(5_000, async () => (await linkCount(srv.url, user.token)) === before + 1, { every: 50, why: () => 'the first request commits' })
  const retry = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/lost' }, headers: keyed(key) })
  assert.is(retry.status, 201)
  assert.is(retry.headers.get('idempotent-replayed'), 'true')
  assert.is(await linkCount(srv.url, user.token), before + 1)
})

test('a refusal about the moment (429, 401) or a field (422) is not kept: the key is used again once it is fixed', async ({ srv, user }) => {
  const key = randomUUID()
  const bad = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'ftp://nope' }, headers: keyed(key) })
  assert.is(bad.status, 422)
  const fixed = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/fixed' }, headers: keyed(key) })
  assert.is(fixed.status, 201)
  assert.is(fixed.headers.get('idempotent-replayed'), null)
})

test('a result about the request is kept: a taken code answers 409 again, even after the code is free', async ({ srv, user }) => {
  const code = `i${randomUUID().replaceAll('-', '').slice(0, 7)}`
  assert.is((await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/c', code } })).status, 201)
  const key = randomUUID()
  const taken = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/c', code }, headers: keyed(key) })
  assertError(taken, 409, 'CODE_TAKEN')
  const again = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/c', code }, headers: keyed(key) })
  assertError(again, 409, 'CODE_TAKEN')
  assert.is(again.headers.get('idempotent-replayed'), 'true')
})

test('registration with a key: one account, the replay answers it; no password, nor a hash of one, is kept', async ({ srv }) => {
  const key = randomUUID()
  const username = uniqueName()
  const password = 'a rather long passphrase'
  const first = await call(srv.url, 'POST', '/api/v1/users', { body: { username, password, display_name: 'Ida' }, headers: keyed(key) })
  assert.is(first.status, 201)
  const again = await call(srv.url, 'POST', '/api/v1/users', { body: { username, password, display_name: 'Ida' }, headers: keyed(key) })
  assert.is(again.status, 201)
  assert.is(again.body.id, first.body.id)
  assert.is(again.headers.get('idempotent-replayed'), 'true')
  const rows = await srv.service.deps.sql<{ body: string }[]>`select body from idempotency_keys where scope = 'anon' and key = ${key}`
  assert.is(rows.length, 1)
  assert.not.ok(rows[0]!.body.includes(password))
  const other = await call(srv.url, 'POST', '/api/v1/users', { body: { username: uniqueName(), password, display_name: 'Ida' }, headers: keyed(key) })
  assertError(other, 422, 'IDEMPOTENCY_KEY_REUSED')
})

test('webhooks: a create and a test delivery with a key happen once', async ({ srv, user }) => {
  const key = randomUUID()
  const body = { url: 'https://hooks.example.com/in', events: ['link.created'] }
  const first = await call(srv.url, 'POST', '/api/v1/webhooks', { token: user.token, body, headers: keyed(key) })
  assert.is(first.status, 201)
  const again = await call(srv.url, 'POST', '/api/v1/webhooks', { token: user.token, body, headers: keyed(key) })
  assert.is(again.body.id, first.body.id)
  assert.is((await call(srv.url, 'GET', '/api/v1/webhooks', { token: user.token })).body.webhooks.length, 1)
  const testKey = randomUUID()
  const sent = await call(srv.url, 'POST', `/api/v1/webhooks/${first.body.id}/test`, { token: user.token, headers: keyed(testKey) })
  assert.is(sent.status, 202)
  const resent = await call(srv.url, 'POST', `/api/v1/webhooks/${first.body.id}/test`, { token: user.token, headers: keyed(testKey) })
  assert.is(resent.body.id, sent.body.id)
  const deliveries = await call(srv.url, 'GET', `/api/v1/webhooks/${first.body.id}/deliveries`, { token: user.token })
  assert.is(deliveries.body.deliveries.filter((d: { event: string }) => d.event === 'webhook.test').length, 1)
})

test('a malformed key is 400 BAD_REQUEST; routes that do not create ignore the header', async ({ srv, user }) => {
  for (const key of ['', 'x'.repeat(256), 'tab\tkey', 'ünï']) {
    const res = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/' }, headers: keyed(key) })
    assertError(res, 400, 'BAD_REQUEST', JSON.stringify(key))
  }
  assert.is((await call(srv.url, 'GET', '/api/v1/links', { token: user.token, headers: keyed('') })).status, 200)
})

test('a key is kept 24 hours: after that the same key makes a new link', async ({ srv, user }) => {
  const key = randomUUID()
  const first = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/old' }, headers: keyed(key) })
  await srv.service.deps.sql`update idempotency_keys set created_at = now() - interval '24 hours 1 second' where key = ${key}`
  const later = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/old' }, headers: keyed(key) })
  assert.is(later.status, 201)
  assert.is(later.headers.get('idempotent-replayed'), null)
  assert.is.not(later.body.code, first.body.code)
})

test.run()

// Every node knows a key: the database holds it.
if (process.env.DATABASE_URL !== undefined) {
  const nodes = twoNodeSuite('Idempotency-Key across nodes')
  nodes('a key used on one node is answered on the other', async ({ a, b }) => {
    const user = await newUser(a.url)
    const key = randomUUID()
    const first = await call(a.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/n' }, headers: keyed(key) })
    const again = await call(b.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/n' }, headers: keyed(key) })
    assert.is(again.headers.get('idempotent-replayed'), 'true')
    assert.is(again.body.code, first.body.code)
  })
  nodes.run()
}
