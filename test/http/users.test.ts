// Accounts: POST /api/v1/users and GET/PATCH/DELETE /api/v1/users/me (spec §2, §8; contract §1-§3).
import { randomBytes } from 'node:crypto'
import * as assert from 'uvu/assert'
import { assertFieldErrors, call, login, newLink, newUser, randomIp, uniqueName, type Res } from '../helpers/api.js'
import { serverSuite, type TestServer } from '../helpers/server.js'

const RFC3339_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const PASSWORD = 'correct horse'
const EMOJI = '😀' // one code point, two UTF-16 units, four UTF-8 bytes

function register(srv: TestServer, body: unknown): Promise<Res> {
  return call(srv.url, 'POST', '/api/v1/users', { body })
}

/** A valid registration body with a fresh username; `over` replaces or adds fields. */
function regBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { username: uniqueName(), password: PASSWORD, display_name: 'Test User', ...over }
}

function assertUser(body: any, expected: { username: string; display_name: string }): void {
  assert.equal(Object.keys(body).sort(), ['created_at', 'display_name', 'id', 'username'])
  assert.type(body.id, 'string')
  assert.ok(body.id.length > 0)
  assert.is(body.username, expected.username)
  assert.is(body.display_name, expected.display_name)
  assert.match(body.created_at, RFC3339_MS_UTC)
}

/** Registers a username of exactly two characters; retries only when a random pick is taken. */
async function registerTwoCharName(srv: TestServer): Promise<Res> {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789'
  let res: Res | undefined
  for (let i = 0; i < 20; i++) {
    const b = randomBytes(2)
    const name = alphabet[b[0]! % alphabet.length]! + alphabet[b[1]! % alphabet.length]!
    res = await register(srv, regBody({ username: name }))
    if (!(res.status === 409 && res.body?.code === 'USERNAME_TAKEN')) return res
  }
  return res!
}

// ---------------------------------------------------------------------------------------------
const reg = serverSuite('POST /api/v1/users')

// contract §3: POST /api/v1/users → 201 {id, username, display_name, created_at}; id is an opaque
// string; username stored in lowercase and shown in the stored form; contract §1: timestamps RFC 3339
// UTC with Z and milliseconds
reg('registration answers 201 with id, lowercase username, display_name and created_at', async ({ srv }) => {
  const name = 'MiXeD' + uniqueName()
  const started = Date.now()
  const res = await register(srv, { username: name, password: PASSWORD, display_name: 'Zoë 😀 Test' })
  assert.is(res.status, 201, res.text)
  assert.is(res.headers.get('content-type'), 'application/json; charset=utf-8')
  assertUser(res.body, { username: name.toLowerCase(), display_name: 'Zoë 😀 Test' })
  const created = Date.parse(res.body.created_at)
  assert.ok(Math.abs(created - started) < 60_000, `created_at ${res.body.created_at} is about now`)
})

// contract §2: messages never echo secrets; the user object has no password field
reg('the registration response contains no password or password hash', async ({ srv }) => {
  const password = 'secret-' + randomBytes(8).toString('hex')
  const res = await register(srv, regBody({ password }))
  assert.is(res.status, 201, res.text)
  assert.not.ok(res.text.includes(password))
  assert.not.ok(/password|hash|scrypt/i.test(res.text), res.text)
})

// contract §3: username is 2 to 32 characters (spec §8: 2–32 ASCII characters)
reg('a 1-character username is TOO_SHORT and a 33-character one TOO_LONG', async ({ srv }) => {
  assertFieldErrors(await register(srv, regBody({ username: 'a' })), [['username', 'TOO_SHORT']], '1 char')
  const long = uniqueName().padEnd(33, 'x')
  assert.is(long.length, 33)
  assertFieldErrors(await register(srv, regBody({ username: long })), [['username', 'TOO_LONG']], '33 chars')
})

// contract §3: username 2 to 32 characters: both bounds are accepted
reg('usernames of exactly 2 and exactly 32 characters are accepted', async ({ srv }) => {
  const two = await registerTwoCharName(srv)
  assert.is(two.status, 201, two.text)
  assert.is(two.body.username.length, 2)
  const name32 = uniqueName().padEnd(32, 'y')
  const res = await register(srv, regBody({ username: name32 }))
  assert.is(res.status, 201, res.text)
  assert.is(res.body.username, name32)
})

// contract §3: each username character is visible ASCII (0x21 to 0x7E): all 94 are accepted
reg('every visible ASCII character 0x21..0x7E is accepted in a username', async ({ srv }) => {
  let all = ''
  for (let c = 0x21; c <= 0x7e; c++) all += String.fromCharCode(c)
  for (let i = 0; i < all.length; i += 19) {
    const name = uniqueName() + all.slice(i, i + 19)
    assert.ok(name.length <= 32)
    const res = await register(srv, regBody({ username: name }))
    assert.is(res.status, 201, `${JSON.stringify(name)}: ${res.text}`)
    assert.is(res.body.username, name.toLowerCase())
  }
})

// contract §3: username characters must be visible ASCII; contract §1: U+0000 makes a field invalid
reg('a username with space, tab, DEL, non-ASCII or U+0000 is INVALID', async ({ srv }) => {
  for (const bad of ['ab cd', 'ab\tcd', 'ab\u007fcd', 'abcé', 'ab😀', 'ab\u0000cd', '\u00a0\u00a0ab']) {
    const res = await register(srv, regBody({ username: bad + uniqueName() }))
    assertFieldErrors(res, [['username', 'INVALID']], JSON.stringify(bad))
  }
})

// contract §2: field error codes TYPE and REQUIRED
reg('a non-string username is TYPE and a missing one REQUIRED', async ({ srv }) => {
  for (const bad of [42, true, ['ab'], { a: 1 }]) {
    assertFieldErrors(await register(srv, regBody({ username: bad })), [['username', 'TYPE']], JSON.stringify(bad))
  }
  const body = regBody()
  delete body.username
  assertFieldErrors(await register(srv, body), [['username', 'REQUIRED']], 'missing')
})

// contract §2: 422 INVALID_FORM_BODY, `errors` lists each field
reg('several invalid fields give one 422 listing each of them', async ({ srv }) => {
  assertFieldErrors(
    await register(srv, {}),
    [
      ['username', 'REQUIRED'],
      ['password', 'REQUIRED'],
      ['display_name', 'REQUIRED'],
    ],
    'empty object',
  )
  assertFieldErrors(
    await register(srv, { username: 'a', password: 7, display_name: '\u0000x' }),
    [
      ['username', 'TOO_SHORT'],
      ['password', 'TYPE'],
      ['display_name', 'INVALID'],
    ],
    'three bad fields',
  )
})

// contract §3: password 8 to 128 Unicode characters; contract §1: lengths count code points
reg('password length counts code points: 8 emoji accepted, 7 emoji TOO_SHORT', async ({ srv }) => {
  const ok = await register(srv, regBody({ password: EMOJI.repeat(8) }))
  assert.is(ok.status, 201, ok.text)
  assertFieldErrors(await register(srv, regBody({ password: EMOJI.repeat(7) })), [['password', 'TOO_SHORT']], '7 emoji')
  assertFieldErrors(await register(srv, regBody({ password: 'x'.repeat(7) })), [['password', 'TOO_SHORT']], '7 ascii')
  const eight = await register(srv, regBody({ password: 'x'.repeat(8) }))
  assert.is(eight.status, 201, eight.text)
})

// contract §3: password at most 128 Unicode characters
reg('a 128-character password is accepted and a 129-character one TOO_LONG', async ({ srv }) => {
  const ascii = await register(srv, regBody({ password: 'p'.repeat(128) }))
  assert.is(ascii.status, 201, ascii.text)
  // 128 emoji are 256 UTF-16 units: still 128 characters
  const emoji = await register(srv, regBody({ password: EMOJI.repeat(128) }))
  assert.is(emoji.status, 201, emoji.text)
  assertFieldErrors(await register(srv, regBody({ password: 'p'.repeat(129) })), [['password', 'TOO_LONG']], '129 ascii')
  assertFieldErrors(await register(srv, regBody({ password: EMOJI.repeat(129) })), [['password', 'TOO_LONG']], '129 emoji')
})

// contract §1: U+0000 makes any field but a password invalid; contract §3: password is "any characters"
reg('a password may contain U+0000 and logs in with exactly that password', async ({ srv }) => {
  const body = regBody({ password: 'abc\u0000defgh' })
  const res = await register(srv, body)
  assert.is(res.status, 201, res.text)
  const ok = await call(srv.url, 'POST', '/api/v1/auth/login', { body: { username: body.username, password: 'abc\u0000defgh' } })
  assert.is(ok.status, 200, ok.text)
  const without = await call(srv.url, 'POST', '/api/v1/auth/login', { body: { username: body.username, password: 'abcdefgh' } })
  assert.is(without.status, 401)
  assert.is(without.body.code, 'INVALID_CREDENTIALS')
})

// contract §1: a lone surrogate has no UTF-8 form and makes any string field invalid
reg('a lone surrogate ("\\ud800") makes username, password or display_name INVALID', async ({ srv }) => {
  const cases: Array<[string, string]> = [
    ['username', `{"username":"${uniqueName()}\\ud800","password":"correct horse","display_name":"Test User"}`],
    ['password', `{"username":"${uniqueName()}","password":"correct\\ud800horse","display_name":"Test User"}`],
    ['display_name', `{"username":"${uniqueName()}","password":"correct horse","display_name":"Test\\udc00User"}`],
  ]
  for (const [field, json] of cases) {
    assertFieldErrors(await register(srv, json), [[field, 'INVALID']], field)
  }
})

// contract §3: display_name 2 to 32 Unicode characters (code points, contract §1)
reg('display_name length: 2 and 32 accepted, 1 TOO_SHORT, 33 TOO_LONG, emoji counted as 1', async ({ srv }) => {
  for (const good of ['ab', 'd'.repeat(32), EMOJI.repeat(2), EMOJI.repeat(32), 'Zoë']) {
    const res = await register(srv, regBody({ display_name: good }))
    assert.is(res.status, 201, `${JSON.stringify(good)}: ${res.text}`)
    assert.is(res.body.display_name, good)
  }
  assertFieldErrors(await register(srv, regBody({ display_name: 'a' })), [['display_name', 'TOO_SHORT']], '1 char')
  assertFieldErrors(await register(srv, regBody({ display_name: EMOJI })), [['display_name', 'TOO_SHORT']], '1 emoji')
  assertFieldErrors(await register(srv, regBody({ display_name: 'd'.repeat(33) })), [['display_name', 'TOO_LONG']], '33')
  assertFieldErrors(await register(srv, regBody({ display_name: EMOJI.repeat(33) })), [['display_name', 'TOO_LONG']], '33 emoji')
})

// contract §3: display_name has no control characters (U+0000, U+007F and U+0085 included)
reg('a display_name with a control character is INVALID', async ({ srv }) => {
  for (const bad of ['ab\u0000cd', 'ab\u007fcd', 'ab\u0085cd', 'ab\tcd', 'ab\ncd', '\u001bab']) {
    assertFieldErrors(await register(srv, regBody({ display_name: bad })), [['display_name', 'INVALID']], JSON.stringify(bad))
  }
})

// contract §3: display_name is not only whitespace
reg('a display_name of only whitespace (or invisible characters) is INVALID', async ({ srv }) => {
  for (const bad of ['  ', '\u3000\u3000', ' \u00a0 ', '\u2003\u2003\u2003', '\u200b\u200b']) {
    assertFieldErrors(await register(srv, regBody({ display_name: bad })), [['display_name', 'INVALID']], JSON.stringify(bad))
  }
  const inner = await register(srv, regBody({ display_name: ' a ' }))
  assert.is(inner.status, 201, inner.text)
})

// contract §2: 409 USERNAME_TAKEN, usernames compared in lowercase
reg('registering "Bob" then "bob" answers 409 USERNAME_TAKEN', async ({ srv }) => {
  const base = uniqueName()
  const first = await register(srv, regBody({ username: 'Bob' + base }))
  assert.is(first.status, 201, first.text)
  for (const again of ['bob' + base, 'BOB' + base.toUpperCase(), 'Bob' + base]) {
    const res = await register(srv, regBody({ username: again }))
    assert.is(res.status, 409, again)
    assert.is(res.body.code, 'USERNAME_TAKEN')
    assert.type(res.body.message, 'string')
    assert.is(res.body.errors, undefined)
  }
})

// contract §2: USERNAME_TAKEN holds under concurrency (the unique index decides)
reg('five parallel registrations of one name (mixed case) give exactly one 201 and four 409', async ({ srv }) => {
  const base = uniqueName('race')
  const names = ['race' + base, 'RACE' + base, 'Race' + base, 'rAcE' + base, 'race' + base]
  const results = await Promise.all(names.map((username) => call(srv.url, 'POST', '/api/v1/users', { ip: randomIp(), body: regBody({ username }) })))
  const statuses = results.map((r) => r.status).sort()
  assert.equal(statuses, [201, 409, 409, 409, 409], results.map((r) => r.text).join('\n'))
  for (const r of results) if (r.status === 409) assert.is(r.body.code, 'USERNAME_TAKEN')
  const winner = results.find((r) => r.status === 201)!
  assert.is(winner.body.username, ('race' + base).toLowerCase())
})

// contract §1: unknown request fields are ignored
reg('unknown fields in the registration body are ignored', async ({ srv }) => {
  const username = uniqueName()
  const res = await register(srv, {
    username,
    password: PASSWORD,
    display_name: 'Test User',
    id: '00000000-0000-0000-0000-000000000000',
    created_at: '2000-01-01T00:00:00.000Z',
    admin: true,
    password_hash: 'scrypt$1$1$1$x$y',
  })
  assert.is(res.status, 201, res.text)
  assertUser(res.body, { username, display_name: 'Test User' })
  assert.is.not(res.body.id, '00000000-0000-0000-0000-000000000000')
  assert.is.not(res.body.created_at, '2000-01-01T00:00:00.000Z')
  // the ignored password_hash did not replace the real one
  assert.type(await login(srv.url, username, PASSWORD), 'string')
})

// contract §2: messages never echo secrets (passwords)
reg('validation errors never echo the password', async ({ srv }) => {
  const marker = 'Zq' + randomBytes(6).toString('hex')
  for (const password of [marker.slice(0, 7), marker.repeat(20).slice(0, 129), marker + '\ud800']) {
    const res = await register(srv, regBody({ username: 'a', password }))
    assert.is(res.status, 422)
    assert.not.ok(res.text.includes(marker.slice(0, 7)), res.text)
  }
})

// ---------------------------------------------------------------------------------------------
const me = serverSuite('GET /api/v1/users/me')

// contract §3: GET /api/v1/users/me → 200 user
me('GET /users/me answers 200 with the same user the registration returned', async ({ srv }) => {
  const username = 'Me' + uniqueName()
  const reg = await register(srv, regBody({ username, display_name: 'Myself 😀' }))
  assert.is(reg.status, 201, reg.text)
  const token = await login(srv.url, username.toLowerCase(), PASSWORD)
  const res = await call(srv.url, 'GET', '/api/v1/users/me', { token })
  assert.is(res.status, 200, res.text)
  assert.is(res.headers.get('content-type'), 'application/json; charset=utf-8')
  assert.equal(res.body, reg.body)
})

// spec §5: protected operations need a bearer session; contract §2: 401 carries WWW-Authenticate
me('GET /users/me without a token answers 401 UNAUTHORIZED', async ({ srv }) => {
  const res = await call(srv.url, 'GET', '/api/v1/users/me')
  assert.is(res.status, 401)
  assert.is(res.body.code, 'UNAUTHORIZED')
  assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer(\s|$)/)
})

// ---------------------------------------------------------------------------------------------
const patch = serverSuite('PATCH /api/v1/users/me')

function patchMe(srv: TestServer, token: string, body: unknown): Promise<Res> {
  return call(srv.url, 'PATCH', '/api/v1/users/me', { token, body })
}

// contract §3: PATCH /api/v1/users/me with display_name → 200 user
patch('PATCH display_name answers 200 with the updated user, and GET shows it', async ({ srv }) => {
  const user = await newUser(srv.url)
  const before = await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })
  const res = await patchMe(srv, user.token, { display_name: 'Renamed 😀' })
  assert.is(res.status, 200, res.text)
  assert.equal(res.body, { ...before.body, display_name: 'Renamed 😀' })
  const after = await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })
  assert.is(after.body.display_name, 'Renamed 😀')
})

// contract §1: unknown request fields are ignored (username is not a PATCH field)
patch('PATCH ignores fields it does not take, such as username and id', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await patchMe(srv, user.token, { display_name: 'New Name', username: 'hijack' + uniqueName(), id: 'x' })
  assert.is(res.status, 200, res.text)
  assert.is(res.body.username, user.username)
  assert.is(res.body.id, user.id)
  assert.is(res.body.display_name, 'New Name')
})

// contract §3: display_name rules apply to PATCH too
patch('PATCH with an invalid display_name answers 422 and changes nothing', async ({ srv }) => {
  const user = await newUser(srv.url)
  assertFieldErrors(await patchMe(srv, user.token, { display_name: 'a' }), [['display_name', 'TOO_SHORT']], 'short')
  assertFieldErrors(await patchMe(srv, user.token, { display_name: '\u3000\u3000' }), [['display_name', 'INVALID']], 'blank')
  assertFieldErrors(await patchMe(srv, user.token, { display_name: 7 }), [['display_name', 'TYPE']], 'type')
  const after = await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })
  assert.is(after.body.display_name, 'Test User')
})

// contract §3: PATCH with display_name and/or password: neither → 422
patch('PATCH with neither display_name nor password answers 422 INVALID_FORM_BODY', async ({ srv }) => {
  const user = await newUser(srv.url)
  for (const body of [{}, { something: 'else' }]) {
    const res = await patchMe(srv, user.token, body)
    assert.is(res.status, 422, res.text)
    assert.is(res.body.code, 'INVALID_FORM_BODY')
    assert.ok(Array.isArray(res.body.errors) && res.body.errors.length > 0, res.text)
  }
})

// contract §3: password (then current_password is required)
patch('PATCH password without current_password answers 422 REQUIRED', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await patchMe(srv, user.token, { password: 'a new password' })
  assertFieldErrors(res, [['current_password', 'REQUIRED']], 'missing current_password')
  assert.type(await login(srv.url, user.username, user.password), 'string')
})

// contract §2: 403 CURRENT_PASSWORD_INCORRECT on a password change with a wrong current_password
patch('PATCH password with a wrong current_password answers 403 CURRENT_PASSWORD_INCORRECT', async ({ srv }) => {
  const user = await newUser(srv.url)
  const other = await login(srv.url, user.username, user.password)
  const res = await patchMe(srv, user.token, { password: 'a new password', current_password: 'not the password' })
  assert.is(res.status, 403, res.text)
  assert.is(res.body.code, 'CURRENT_PASSWORD_INCORRECT')
  assert.not.ok(res.text.includes('not the password'))
  assert.not.ok(res.text.includes('a new password'))
  // nothing changed: the old password still logs in and no session was revoked
  assert.type(await login(srv.url, user.username, user.password), 'string')
  const again = await call(srv.url, 'GET', '/api/v1/users/me', { token: other })
  assert.is(again.status, 200)
})

// contract §3: password rules (8 to 128 characters) apply to the new password
patch('PATCH with an invalid new password answers 422 and keeps the old password', async ({ srv }) => {
  const user = await newUser(srv.url)
  assertFieldErrors(await patchMe(srv, user.token, { password: 'short', current_password: user.password }), [['password', 'TOO_SHORT']], 'short')
  assertFieldErrors(
    await patchMe(srv, user.token, { password: 'p'.repeat(129), current_password: user.password }),
    [['password', 'TOO_LONG']],
    'long',
  )
  assertFieldErrors(await patchMe(srv, user.token, { password: 12345678, current_password: user.password }), [['password', 'TYPE']], 'type')
  assert.type(await login(srv.url, user.username, user.password), 'string')
})

// contract §3: a password change revokes every other session of the user; the current one stays
patch('a password change revokes other sessions, keeps the current one, and swaps the login password', async ({ srv }) => {
  const user = await newUser(srv.url)
  const second = await login(srv.url, user.username, user.password)
  const third = await login(srv.url, user.username, user.password)
  const bystander = await newUser(srv.url)
  const res = await patchMe(srv, user.token, { password: 'brand new password', current_password: user.password })
  assert.is(res.status, 200, res.text)
  assert.equal(Object.keys(res.body).sort(), ['created_at', 'display_name', 'id', 'username'])
  assert.not.ok(res.text.includes('brand new password'))
  const current = await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })
  assert.is(current.status, 200)
  for (const token of [second, third]) {
    const revoked = await call(srv.url, 'GET', '/api/v1/users/me', { token })
    assert.is(revoked.status, 401)
    assert.is(revoked.body.code, 'UNAUTHORIZED')
  }
  // another user's session is untouched
  const other = await call(srv.url, 'GET', '/api/v1/users/me', { token: bystander.token })
  assert.is(other.status, 200)
  const old = await call(srv.url, 'POST', '/api/v1/auth/login', { body: { username: user.username, password: user.password } })
  assert.is(old.status, 401)
  assert.is(old.body.code, 'INVALID_CREDENTIALS')
  const fresh = await call(srv.url, 'POST', '/api/v1/auth/login', { body: { username: user.username, password: 'brand new password' } })
  assert.is(fresh.status, 200, fresh.text)
})

// contract §3: display_name and password in one PATCH
patch('PATCH can change display_name and password together', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await patchMe(srv, user.token, { display_name: 'Both', password: 'another password', current_password: user.password })
  assert.is(res.status, 200, res.text)
  assert.is(res.body.display_name, 'Both')
  assert.type(await login(srv.url, user.username, 'another password'), 'string')
})

// spec §5: protected operation
patch('PATCH without a token answers 401 UNAUTHORIZED', async ({ srv }) => {
  const res = await call(srv.url, 'PATCH', '/api/v1/users/me', { body: { display_name: 'Nobody' } })
  assert.is(res.status, 401)
  assert.is(res.body.code, 'UNAUTHORIZED')
})

// ---------------------------------------------------------------------------------------------
const del = serverSuite('DELETE /api/v1/users/me')

// contract §3: DELETE /api/v1/users/me → 204; the user's sessions and links go with it and its
// codes stop redirecting; contract §1: 204 responses have no body
del('DELETE /users/me answers 204 and removes sessions, login and link redirects', async ({ srv }) => {
  const user = await newUser(srv.url)
  const second = await login(srv.url, user.username, user.password)
  const links = [await newLink(srv.url, user.token, 'https://example.com/one'), await newLink(srv.url, user.token, 'https://example.com/two')]
  // warm any redirect cache first
  for (const link of links) assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).status, 302)
  const bystander = await newUser(srv.url)
  const theirs = await newLink(srv.url, bystander.token, 'https://example.com/kept')

  const res = await call(srv.url, 'DELETE', '/api/v1/users/me', { token: user.token })
  assert.is(res.status, 204)
  assert.is(res.text, '')
  assert.is(res.headers.get('content-type'), null)

  for (const token of [user.token, second]) {
    const gone = await call(srv.url, 'GET', '/api/v1/users/me', { token })
    assert.is(gone.status, 401)
    assert.is(gone.body.code, 'UNAUTHORIZED')
  }
  const relogin = await call(srv.url, 'POST', '/api/v1/auth/login', { body: { username: user.username, password: user.password } })
  assert.is(relogin.status, 401)
  assert.is(relogin.body.code, 'INVALID_CREDENTIALS')
  for (const link of links) {
    const r = await call(srv.url, 'GET', `/r/${link.code}`)
    assert.is(r.status, 404, link.code)
    assert.is(r.body.code, 'LINK_NOT_FOUND')
    assert.is(r.headers.get('location'), null)
  }
  const sessions = await srv.service.db.sql<{ n: number }[]>`select count(*)::int as n from sessions where user_id = ${user.id}`
  assert.is(sessions[0]!.n, 0)
  // another account is untouched
  assert.is((await call(srv.url, 'GET', `/r/${theirs.code}`)).status, 302)
  assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token: bystander.token })).status, 200)
})

// contract: silent on reusing a deleted account's username. Either answer is allowed, but a new
// account under that name must not inherit anything from the deleted one.
del('re-registering a deleted username inherits none of the old account', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token, 'https://example.com/old')
  assert.is((await call(srv.url, 'DELETE', '/api/v1/users/me', { token: user.token })).status, 204)
  const again = await register(srv, { username: user.username, password: 'other password', display_name: 'Second' })
  if (again.status === 409) {
    assert.is(again.body.code, 'USERNAME_TAKEN')
    return
  }
  assert.is(again.status, 201, again.text)
  assert.is.not(again.body.id, user.id)
  assert.is(again.body.display_name, 'Second')
  const oldPassword = await call(srv.url, 'POST', '/api/v1/auth/login', { body: { username: user.username, password: user.password } })
  assert.is(oldPassword.status, 401)
  const token = await login(srv.url, user.username, 'other password')
  const list = await call(srv.url, 'GET', '/api/v1/links', { token })
  assert.is(list.status, 200)
  assert.equal(list.body.links, [])
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token })).status, 404)
  assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).status, 404)
  assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })).status, 401)
})

// spec §5: protected operation
del('DELETE /users/me with an unknown token answers 401 and deletes nothing', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await call(srv.url, 'DELETE', '/api/v1/users/me', { headers: { authorization: 'Bearer ' + 'A'.repeat(43) } })
  assert.is(res.status, 401)
  assert.is(res.body.code, 'UNAUTHORIZED')
  assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })).status, 200)
})

reg.run()
me.run()
patch.run()
del.run()
