// /api/v1/auth/sessions: list the caller's live sessions, end one, end all others.
// Ended sessions get 401 at once, on every node (sessions are read from the database per request).
import * as assert from 'uvu/assert'
import { call, login, newUser, type User } from '../helpers/api.js'
import { serverSuite, type TestServer, twoNodeSuite } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const list = (srv: TestServer, token: string) => call(srv.url, 'GET', '/api/v1/auth/sessions', { token })
const me = (srv: TestServer, token: string) => call(srv.url, 'GET', '/api/v1/users/me', { token })

const test = serverSuite<{ user: User }>('sessions')
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('lists the caller’s live sessions, newest first, marking the current one; never a token', async ({ srv }) => {
  const user = await newUser(srv.url)
  const laptop = user.token
  const phone = await login(srv.url, user.username, user.password)
  const res = await list(srv, phone)
  assert.is(res.status, 200, res.text)
  assert.is(res.body.sessions.length, 2)
  for (const s of res.body.sessions) {
    assert.equal(Object.keys(s), ['id', 'created_at', 'expires_at', 'last_used_at', 'current'])
    for (const f of ['created_at', 'expires_at', 'last_used_at']) assert.ok(TIMESTAMP.test(s[f]), s[f])
    assert.ok(!res.text.includes(laptop) && !res.text.includes(phone))
  }
  assert.equal(res.body.sessions.map((s: { current: boolean }) => s.current), [true, false])
  const other = await newUser(srv.url)
  const theirs = await list(srv, other.token)
  assert.is(theirs.body.sessions.length, 1, 'only the caller’s own')
  assert.not.ok(theirs.body.sessions.some((s: { id: string }) => res.body.sessions.some((m: { id: string }) => m.id === s.id)))
  // an expired session is not listed
  await srv.service.db.sql`update sessions set expires_at = now() - interval '1 second' where user_id = ${user.id} and id = ${res.body.sessions[1].id}::uuid`
  assert.is((await list(srv, phone)).body.sessions.length, 1)
})

test('last_used_at moves at most once a minute', async ({ srv }) => {
  const user = await newUser(srv.url)
  const sql = srv.service.db.sql
  await sql`update sessions set last_used_at = now() - interval '5 minutes' where user_id = ${user.id}`
  const shown = (await list(srv, user.token)).body.sessions[0].last_used_at
  const [row] = await sql<{ age: number }[]>`select extract(epoch from now() - last_used_at)::float8 as age from sessions where user_id = ${user.id}`
  assert.ok(row!.age < 5, 'touched by the request that listed it')
  assert.ok(Math.abs(Date.now() - Date.parse(shown)) < 5_000, `shown as just used: ${shown}`)
  await sql`update sessions set last_used_at = now() - interval '30 seconds' where user_id = ${user.id}`
  await me(srv, user.token)
  const [still] = await sql<{ age: number }[]>`select extract(epoch from now() - last_used_at)::float8 as age from sessions where user_id = ${user.id}`
  assert.ok(still!.age >= 29, 'not written again within the minute')
})

test('DELETE /sessions/{id} ends that session: 204, then 401 for its token', async ({ srv }) => {
  const user = await newUser(srv.url)
  const lost = await login(srv.url, user.username, user.password)
  const sessions = (await list(srv, user.token)).body.sessions
  const target = sessions.find((s: { current: boolean }) => !s.current)
  const res = await call(srv.url, 'DELETE', `/api/v1/auth/sessions/${target.id}`, { token: user.token })
  assert.is(res.status, 204)
  assert.is((await me(srv, lost)).status, 401)
  assert.is((await me(srv, user.token)).status, 200)
  const again = await call(srv.url, 'DELETE', `/api/v1/auth/sessions/${target.id}`, { token: user.token })
  assert.equal([again.status, again.body.code], [404, 'SESSION_NOT_FOUND'])
})

test('another user’s session id and malformed ids are 404 SESSION_NOT_FOUND; the current one may be ended', async ({ srv }) => {
  const user = await newUser(srv.url)
  const other = await newUser(srv.url)
  const theirs = (await list(srv, other.token)).body.sessions[0].id
  for (const id of [theirs, 'not-a-uuid', theirs.toUpperCase(), '00000000-0000-0000-0000-000000000000']) {
    const res = await call(srv.url, 'DELETE', `/api/v1/auth/sessions/${id}`, { token: user.token })
    assert.equal([res.status, res.body?.code], [404, 'SESSION_NOT_FOUND'], id)
  }
  assert.is((await me(srv, other.token)).status, 200, 'untouched')
  const mine = (await list(srv, user.token)).body.sessions[0].id
  assert.is((await call(srv.url, 'DELETE', `/api/v1/auth/sessions/${mine}`, { token: user.token })).status, 204)
  assert.is((await me(srv, user.token)).status, 401)
})

test('DELETE /sessions ends every session but the current one', async ({ srv }) => {
  const user = await newUser(srv.url)
  const others = await Promise.all([1, 2, 3].map(() => login(srv.url, user.username, user.password)))
  const stranger = await newUser(srv.url)
  assert.is((await call(srv.url, 'DELETE', '/api/v1/auth/sessions', { token: user.token })).status, 204)
  for (const token of others) assert.is((await me(srv, token)).status, 401)
  assert.is((await me(srv, user.token)).status, 200)
  assert.is((await me(srv, stranger.token)).status, 200)
  assert.is((await list(srv, user.token)).body.sessions.length, 1)
  assert.is((await call(srv.url, 'GET', '/api/v1/auth/sessions')).status, 401)
})

test.run()

// A session ended from another device gets 401 (on every node)
if (process.env.DATABASE_URL !== undefined) {
  const nodes = twoNodeSuite('sessions on two nodes')
  nodes('a session ended on node A gets 401 on node B at once', async ({ a, b }) => {
    const user = await newUser(a.url)
    const laptop = await login(b.url, user.username, user.password)
    assert.is((await me(b, laptop)).status, 200)
    const id = (await list(a, user.token)).body.sessions.find((s: { current: boolean }) => !s.current).id
    assert.is((await call(a.url, 'DELETE', `/api/v1/auth/sessions/${id}`, { token: user.token })).status, 204)
    // At once: as soon as node B hears the change feed's notice (milliseconds; it may reach B a
    // moment after A's answer reaches the client), not after SESSION_CACHE_MS (30 s).
    let last = 0
    await until(2_000, async () => (last = (await me(b, laptop)).status) === 401, { why: () => `node B still answers ${last}` })
  })
  nodes.run()
}
