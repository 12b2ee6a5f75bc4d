// Sessions: login, logout, bearer parsing and expiry (spec §2, §3, §5, §7; contract §2, §3, §8).
import { createHash, randomBytes } from 'node:crypto'
import * as assert from 'uvu/assert'
import { call, login, newUser, randomIp, uniqueName, type Res } from '../helpers/api.js'
import { header, raw, requestHead, type RawResponse } from '../helpers/raw.js'
import { serverSuite, type TestServer } from '../helpers/server.js'
import { deleteExpiredSessions } from '../../src/auth/sessions.js'
import { sleep } from '../helpers/wait.js'

const RFC3339_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const TOKEN = /^[A-Za-z0-9_-]{43}$/
const DAY_MS = 24 * 60 * 60 * 1000

function postLogin(srv: TestServer, body: unknown): Promise<Res> {
  return call(srv.url, 'POST', '/api/v1/auth/login', { body })
}

function getMe(srv: TestServer, headers: Record<string, string>): Promise<Res> {
  return call(srv.url, 'GET', '/api/v1/users/me', { headers })
}

/** One request over a raw socket, with header lines exactly as given. */
function rawRequest(srv: TestServer, method: string, path: string, headerLines: string[]): Promise<RawResponse> {
  const host = new URL(srv.url).host
  return raw(srv.url, [requestHead([`${method} ${path} HTTP/1.1`, `Host: ${host}`, `X-Forwarded-For: ${randomIp()}`, ...headerLines, 'Connection: close'])])
}

function assertUnauthorized(res: Res, label: string): void {
  assert.is(res.status, 401, `${label}: status (${res.text})`)
  assert.is(res.body?.code, 'UNAUTHORIZED', `${label}: code`)
  assert.type(res.body.message, 'string', `${label}: message`)
  assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer(\s|$)/, `${label}: WWW-Authenticate`)
}

async function sessionCount(srv: TestServer, userId: string): Promise<number> {
  const rows = await srv.service.db.sql<{ n: number }[]>`select count(*)::int as n from sessions where user_id = ${userId}`
  return rows[0]!.n
}

/** The token with the case of its first letter flipped, or undefined if it has no letter. */
function flipCase(token: string): string | undefined {
  const i = token.search(/[A-Za-z]/)
  if (i === -1) return undefined
  const c = token[i]!
  return token.slice(0, i) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + token.slice(i + 1)
}

// ---------------------------------------------------------------------------------------------
const loginSuite = serverSuite('POST /api/v1/auth/login')

// contract §3: login → 200 {token, created_at, expires_at}; spec §2: token is 43 unpadded
// base64url characters; default lifetime 24 hours; contract §1: RFC 3339 UTC with milliseconds
loginSuite('login answers 200 with a 43-char base64url token, created_at and expires_at 24 h later', async ({ srv }) => {
  const user = await newUser(srv.url)
  const started = Date.now()
  const res = await postLogin(srv, { username: user.username, password: user.password })
  assert.is(res.status, 200, res.text)
  assert.is(res.headers.get('content-type'), 'application/json; charset=utf-8')
  assert.is(res.headers.get('cache-control'), 'no-store', 'a token is never cached on its way')
  assert.equal(Object.keys(res.body).sort(), ['created_at', 'expires_at', 'token'])
  assert.match(res.body.token, TOKEN)
  assert.is(Buffer.from(res.body.token, 'base64url').length, 32)
  assert.match(res.body.created_at, RFC3339_MS_UTC)
  assert.match(res.body.expires_at, RFC3339_MS_UTC)
  assert.is(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at), DAY_MS)
  assert.ok(Math.abs(Date.parse(res.body.created_at) - started) < 60_000, 'created_at is about now')
  const me = await call(srv.url, 'GET', '/api/v1/users/me', { token: res.body.token })
  assert.is(me.status, 200)
  assert.is(me.body.id, user.id)
})

// spec §2, §5.5: each successful login creates an independent session; older sessions stay valid
loginSuite('each login creates an independent session and older sessions stay valid', async ({ srv }) => {
  const user = await newUser(srv.url)
  const tokens = [user.token]
  for (let i = 0; i < 3; i++) tokens.push(await login(srv.url, user.username, user.password))
  assert.is(new Set(tokens).size, 4)
  for (const token of tokens) {
    const res = await call(srv.url, 'GET', '/api/v1/users/me', { token })
    assert.is(res.status, 200, token)
  }
  assert.is(await sessionCount(srv, user.id), 4)
})

// spec §5.5 / contract §3: username compared exactly, with no case folding, against the stored lowercase
loginSuite('registered "Alice…" logs in as "alice…" but not as "Alice…"', async ({ srv }) => {
  const name = 'Alice' + uniqueName()
  const reg = await call(srv.url, 'POST', '/api/v1/users', { body: { username: name, password: 'correct horse', display_name: 'Alice' } })
  assert.is(reg.status, 201, reg.text)
  const lower = await postLogin(srv, { username: name.toLowerCase(), password: 'correct horse' })
  assert.is(lower.status, 200, lower.text)
  for (const variant of [name, name.toUpperCase(), ` ${name.toLowerCase()}`, `${name.toLowerCase()} `]) {
    const res = await postLogin(srv, { username: variant, password: 'correct horse' })
    assert.is(res.status, 401, JSON.stringify(variant))
    assert.is(res.body.code, 'INVALID_CREDENTIALS')
  }
})

// spec §5.6 / contract §2: unknown username and wrong password give the same 401 INVALID_CREDENTIALS body
loginSuite('an unknown username and a wrong password get the same 401 INVALID_CREDENTIALS', async ({ srv }) => {
  const user = await newUser(srv.url)
  const wrong = await postLogin(srv, { username: user.username, password: 'wrong password' })
  const unknown = await postLogin(srv, { username: uniqueName('nobody'), password: 'wrong password' })
  assert.is(wrong.status, 401)
  assert.is(wrong.body.code, 'INVALID_CREDENTIALS')
  assert.type(wrong.body.message, 'string')
  assert.is(unknown.status, wrong.status)
  assert.equal(unknown.body, wrong.body)
  assert.is(unknown.headers.get('www-authenticate'), wrong.headers.get('www-authenticate'))
  assert.not.ok(wrong.text.includes('wrong password'))
})

// contract §3: login does not validate password length
loginSuite('login does not validate password length: a 3-char or 200-char wrong password is 401, not 422', async ({ srv }) => {
  const user = await newUser(srv.url)
  for (const password of ['abc', '', 'p'.repeat(200)]) {
    const res = await postLogin(srv, { username: user.username, password })
    assert.is(res.status, 401, `${password.length} chars: ${res.text}`)
    assert.is(res.body.code, 'INVALID_CREDENTIALS')
  }
})

// contract §2: a field missing or of the wrong type → 422 INVALID_FORM_BODY with `errors`
loginSuite('login with missing or non-string fields answers 422 INVALID_FORM_BODY', async ({ srv }) => {
  const missing = await postLogin(srv, {})
  assert.is(missing.status, 422, missing.text)
  assert.is(missing.body.code, 'INVALID_FORM_BODY')
  const got = (missing.body.errors as Array<{ field: string; code: string }>).map((e) => `${e.field}:${e.code}`).sort()
  assert.equal(got, ['password:REQUIRED', 'username:REQUIRED'])
  const onlyName = await postLogin(srv, { username: 'someone' })
  assert.is(onlyName.status, 422)
  assert.equal(
    (onlyName.body.errors as Array<{ field: string; code: string }>).map((e) => `${e.field}:${e.code}`),
    ['password:REQUIRED'],
  )
  const typed = await postLogin(srv, { username: 12, password: ['x'] })
  assert.is(typed.status, 422)
  assert.equal(
    (typed.body.errors as Array<{ field: string; code: string }>).map((e) => `${e.field}:${e.code}`).sort(),
    ['password:TYPE', 'username:TYPE'],
  )
})

// contract §3: tokens are stored only as a SHA-256 digest
loginSuite('sessions store only the SHA-256 of the token, never the token', async ({ srv }) => {
  const user = await newUser(srv.url)
  const rows = await srv.service.db.sql<Record<string, unknown>[]>`select * from sessions where user_id = ${user.id}`
  assert.is(rows.length, 1)
  const row = rows[0]!
  assert.ok(Buffer.isBuffer(row.token_hash), 'token_hash is bytes')
  assert.ok((row.token_hash as Buffer).equals(createHash('sha256').update(user.token).digest()), 'token_hash = sha256(token)')
  for (const [column, value] of Object.entries(row)) {
    const text = Buffer.isBuffer(value) ? value.toString('latin1') : String(value)
    assert.not.ok(text.includes(user.token), `column ${column} holds the token`)
    if (Buffer.isBuffer(value)) assert.not.ok(value.includes(Buffer.from(user.token, 'base64url')), `column ${column} holds the raw token bytes`)
  }
})

// spec §4 rule 2: /api/v1/login does not exist → 404 ROUTE_NOT_FOUND
loginSuite('POST /api/v1/login answers 404 ROUTE_NOT_FOUND', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await call(srv.url, 'POST', '/api/v1/login', { body: { username: user.username, password: user.password } })
  assert.is(res.status, 404)
  assert.is(res.body.code, 'ROUTE_NOT_FOUND')
})

// ---------------------------------------------------------------------------------------------
const bearer = serverSuite('bearer header')

// spec §5.3 / contract §3: the scheme word is case-insensitive; one or more spaces
bearer('the Bearer scheme is accepted in any letter case and with several spaces', async ({ srv }) => {
  const user = await newUser(srv.url)
  for (const value of [`Bearer ${user.token}`, `bearer ${user.token}`, `BEARER ${user.token}`, `bEaReR ${user.token}`, `Bearer   ${user.token}`]) {
    const res = await getMe(srv, { authorization: value })
    assert.is(res.status, 200, `${value.replace(user.token, '<token>')}: ${res.text}`)
    assert.is(res.body.id, user.id)
  }
})

// spec §5.4, §7 / contract §3: exactly the scheme and one non-empty token; malformed → 401 UNAUTHORIZED
bearer('a missing or malformed Authorization header answers 401 UNAUTHORIZED with WWW-Authenticate', async ({ srv }) => {
  const user = await newUser(srv.url)
  const t = user.token
  assertUnauthorized(await getMe(srv, {}), 'no header')
  const malformed: Array<[string, string]> = [
    ['empty', ''],
    ['scheme alone', 'Bearer'],
    ['token alone', t],
    ['Basic scheme', `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`],
    ['other scheme with token', `Token ${t}`],
    ['scheme with colon', `Bearer: ${t}`],
    ['no space', `Bearer${t}`],
    ['tab separator', `Bearer\t${t}`],
    ['two words', 'Bearer a b'],
    ['trailing extra part', `Bearer ${t} extra`],
    ['extra part glued by comma', `Bearer ${t},x`],
    ['two tokens', `Bearer ${t} ${t}`],
    ['42 chars', `Bearer ${t.slice(0, 42)}`],
    ['44 chars', `Bearer ${t}A`],
    ['padded', `Bearer ${t}=`],
    ['standard base64 alphabet', `Bearer ${t.slice(0, 41)}+/`],
    ['scheme twice', `Bearer Bearer ${t}`],
  ]
  for (const [label, value] of malformed) assertUnauthorized(await getMe(srv, { authorization: value }), label)
  // the same session still works afterwards
  assert.is((await getMe(srv, { authorization: `Bearer ${t}` })).status, 200)
})

// spec §5.4: the header must consist of the scheme and one non-empty token ("Bearer" plus spaces)
bearer('"Bearer" followed only by spaces answers 401 (sent raw)', async ({ srv }) => {
  for (const value of ['Bearer  ', 'Bearer ', ' ']) {
    const res = await rawRequest(srv, 'GET', '/api/v1/users/me', [`Authorization: ${value}`])
    assert.is(res.status, 401, JSON.stringify(value))
    assert.match(res.body, /"code":"UNAUTHORIZED"/)
    assert.match(header(res.head, 'www-authenticate') ?? '', /^Bearer(\s|$)/)
  }
})

// contract §3: several Authorization headers are malformed
bearer('two Authorization headers answer 401 even when both carry the valid token', async ({ srv }) => {
  const user = await newUser(srv.url)
  const one = await rawRequest(srv, 'GET', '/api/v1/users/me', [`Authorization: Bearer ${user.token}`])
  assert.is(one.status, 200, one.head) // control: the raw request itself is fine
  const other = await newUser(srv.url)
  for (const second of [`Bearer ${user.token}`, `Bearer ${other.token}`, 'Basic eDp5']) {
    const res = await rawRequest(srv, 'GET', '/api/v1/users/me', [`Authorization: Bearer ${user.token}`, `authorization: ${second}`])
    assert.is(res.status, 401, second.slice(0, 6))
    assert.match(res.body, /"code":"UNAUTHORIZED"/)
    assert.match(header(res.head, 'www-authenticate') ?? '', /^Bearer(\s|$)/)
  }
})

// spec §2, §5.3: the token value is case-sensitive
bearer('the valid token with one letter in another case answers 401', async ({ srv }) => {
  const user = await newUser(srv.url)
  const flipped = flipCase(user.token)
  assert.ok(flipped !== undefined, 'a 43-char token has a letter')
  assertUnauthorized(await getMe(srv, { authorization: `Bearer ${flipped}` }), 'flipped case')
  assertUnauthorized(await getMe(srv, { authorization: `Bearer ${user.token.toUpperCase()}` }), 'upper case')
})

// spec §5 table: unknown token → 401 UNAUTHORIZED
bearer('a well-formed but unknown token answers 401', async ({ srv }) => {
  assertUnauthorized(await getMe(srv, { authorization: `Bearer ${randomBytes(32).toString('base64url')}` }), 'unknown')
})

// spec §5 table: revoked token → 401 UNAUTHORIZED
bearer('a revoked (logged-out) token answers 401 on every protected route', async ({ srv }) => {
  const user = await newUser(srv.url)
  assert.is((await call(srv.url, 'POST', '/api/v1/auth/logout', { token: user.token })).status, 204)
  assertUnauthorized(await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token }), 'GET me')
  assertUnauthorized(await call(srv.url, 'PATCH', '/api/v1/users/me', { token: user.token, body: { display_name: 'xx' } }), 'PATCH me')
  assertUnauthorized(await call(srv.url, 'GET', '/api/v1/links', { token: user.token }), 'GET links')
  assertUnauthorized(await call(srv.url, 'POST', '/api/v1/auth/logout', { token: user.token }), 'logout again')
})

// ---------------------------------------------------------------------------------------------
const logout = serverSuite('POST /api/v1/auth/logout')

// contract §3: logout → 204; contract §1: 204 has no body; spec §3: the token is then revoked
logout('logout answers 204 with no body and the token then gets 401', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await call(srv.url, 'POST', '/api/v1/auth/logout', { token: user.token })
  assert.is(res.status, 204)
  assert.is(res.text, '')
  assert.is(res.headers.get('content-type'), null)
  assert.ok(res.headers.get('x-request-id'))
  assertUnauthorized(await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token }), 'after logout')
  assert.is(await sessionCount(srv, user.id), 0)
})

// spec §3, §5.7: logout deletes only the current session; other sessions of the user stay valid
logout('logout deletes only the current session; the same user\'s other session still works', async ({ srv }) => {
  const user = await newUser(srv.url)
  const other = await login(srv.url, user.username, user.password)
  assert.is((await call(srv.url, 'POST', '/api/v1/auth/logout', { token: user.token })).status, 204)
  const still = await call(srv.url, 'GET', '/api/v1/users/me', { token: other })
  assert.is(still.status, 200)
  assert.is(still.body.id, user.id)
  assertUnauthorized(await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token }), 'logged-out one')
  assert.is(await sessionCount(srv, user.id), 1)
})

// contract §3: logout: any request body is ignored
logout('a logout request body is ignored: JSON (or not) still answers 204', async ({ srv }) => {
  const user = await newUser(srv.url)
  const json = await call(srv.url, 'POST', '/api/v1/auth/logout', { token: user.token, body: { everywhere: true, token: 'x' } })
  assert.is(json.status, 204, json.text)
  assert.is(json.text, '')
  const second = await login(srv.url, user.username, user.password)
  const text = await call(srv.url, 'POST', '/api/v1/auth/logout', { token: second, body: 'not json at all', headers: { 'content-type': 'text/plain' } })
  assert.is(text.status, 204, text.text)
  assert.is(await sessionCount(srv, user.id), 0)
})

// spec §4: logout requires a bearer session
logout('logout without a token answers 401 UNAUTHORIZED', async ({ srv }) => {
  assertUnauthorized(await call(srv.url, 'POST', '/api/v1/auth/logout'), 'no token')
})

// ---------------------------------------------------------------------------------------------
const expiry = serverSuite('session expiry (SESSION_TTL_SECONDS=1)', { SESSION_TTL_SECONDS: '1' })

// spec §2: expires_at is authoritative; contract §8: SESSION_TTL_SECONDS is the lifetime of new sessions
expiry('with SESSION_TTL_SECONDS=1 expires_at is created_at + 1 s', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await postLogin(srv, { username: user.username, password: user.password })
  assert.is(res.status, 200)
  assert.is(Date.parse(res.body.expires_at) - Date.parse(res.body.created_at), 1000)
})

// spec §3, §5.8: an expired session gives 401 UNAUTHORIZED and is removed when presented
expiry('an expired token answers 401 UNAUTHORIZED and its session row is removed when presented', async ({ srv }) => {
  const user = await newUser(srv.url)
  const other = await newUser(srv.url) // only to compare: its row is not presented
  await sleep(1500)
  assert.is(await sessionCount(srv, user.id), 1, 'the expired row is still there before it is presented')
  assertUnauthorized(await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token }), 'expired')
  assert.is(await sessionCount(srv, user.id), 0, 'presented: removed')
  assert.is(await sessionCount(srv, other.id), 1, 'not presented: still there until the sweep')
  // a fresh login still works
  const token = await login(srv.url, user.username, user.password)
  assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token })).status, 200)
})

// An expired session is removed when presented and by a periodic sweep
expiry('the sweep removes expired sessions nobody presents, and keeps live ones', async ({ srv }) => {
  const user = await newUser(srv.url)
  await sleep(1500)
  const live = await login(srv.url, user.username, user.password)
  assert.is(await sessionCount(srv, user.id), 2)
  assert.ok((await deleteExpiredSessions(srv.service.db.sql)) >= 1)
  assert.is(await sessionCount(srv, user.id), 1, 'the expired one is gone')
  assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token: live })).status, 200)
})

// ---------------------------------------------------------------------------------------------
const logs = serverSuite('secrets in logs')

// contract §8: never log tokens, passwords or the Authorization header
logs('no password, token or Authorization value reaches the log', async ({ srv }) => {
  const from = srv.logs.length
  const password = 'pw-' + randomBytes(8).toString('hex')
  const newPassword = 'npw-' + randomBytes(8).toString('hex')
  const user = await newUser(srv.url, password)
  const second = await login(srv.url, user.username, password)
  await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })
  await postLogin(srv, { username: user.username, password: password + 'x' }) // 401
  await call(srv.url, 'POST', '/api/v1/users', { body: { username: 'a', password: 'short' + password.slice(3, 6), display_name: 'x' } }) // 422
  await call(srv.url, 'GET', '/api/v1/users/me', { headers: { authorization: `Bearer ${user.token}x` } }) // 401 malformed
  await call(srv.url, 'GET', '/api/v1/users/me', { token: flipCase(user.token)! }) // 401 unknown
  await call(srv.url, 'PATCH', '/api/v1/users/me', { token: user.token, body: { password: newPassword, current_password: 'wrong' + password } }) // 403
  await call(srv.url, 'PATCH', '/api/v1/users/me', { token: user.token, body: { password: newPassword, current_password: password } }) // 200
  await call(srv.url, 'POST', '/api/v1/auth/logout', { token: second })
  await sleep(50)
  srv.service.deps.log.flush()
  const text = srv.logs.slice(from).join('\n')
  assert.ok(text.includes('/api/v1/auth/login'), 'requests are logged at all')
  assert.ok(text.includes('/api/v1/users/me'), 'requests are logged at all')
  for (const secret of [password, newPassword, password.slice(3), user.token, second, user.token.slice(0, 20), second.slice(0, 20)]) {
    assert.not.ok(text.includes(secret), `log holds a secret: ${secret.slice(0, 4)}…`)
  }
  assert.not.ok(/bearer/i.test(text), 'log mentions Bearer')
  assert.not.ok(/authorization/i.test(text), 'log mentions Authorization')
})

loginSuite.run()
bearer.run()
logout.run()
expiry.run()
logs.run()
