// Password links: the password is stored as argon2id and never returned; /r/{code} answers 401
// (a form for a browser, LINK_PASSWORD_REQUIRED for anything else) until the right password is
// POSTed to /r/{code}/unlock, as JSON or as the form; guesses are refused (429) before any
// hashing, per address and per link, without locking out an address that never guessed wrong.
import * as assert from 'uvu/assert'
import { assertError, assertFieldErrors, call, newUser, randomIp, type User } from '../helpers/api.js'
import { serverSuite, type TestServer } from '../helpers/server.js'

const BROWSER = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }
const PASSWORD = 'open sesame'
const create = (srv: TestServer, token: string, body: unknown) => call(srv.url, 'POST', '/api/v1/links', { token, body })
const patch = (srv: TestServer, token: string, code: string, body: unknown) => call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token, body })
const unlock = (srv: TestServer, code: string, password: unknown, ip = randomIp()) => call(srv.url, 'POST', `/r/${code}/unlock`, { body: { password }, ip })
const postForm = (srv: TestServer, code: string, form: string, headers: Record<string, string> = {}) =>
  call(srv.url, 'POST', `/r/${code}/unlock`, { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded', ...BROWSER, ...headers } })

async function passwordLink(srv: TestServer, user: User, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await create(srv, user.token, { url: 'https://example.com/secret', password: PASSWORD, ...extra })
  assert.is(res.status, 201, res.text)
  return res.body.code
}

const test = serverSuite<{ user: User }>('password links')
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('a password is 8 to 128 characters, never returned: the link says only that it has one', async ({ srv, user }) => {
  const url = 'https://example.com/'
  assertFieldErrors(await create(srv, user.token, { url, password: 'seven77' }), [['password', 'TOO_SHORT']])
  assertFieldErrors(await create(srv, user.token, { url, password: 'x'.repeat(129) }), [['password', 'TOO_LONG']])
  assertFieldErrors(await create(srv, user.token, { url, password: 12345678 }), [['password', 'TYPE']])
  const res = await create(srv, user.token, { url, password: PASSWORD })
  assert.is(res.body.password_protected, true)
  assert.not.match(res.text, /sesame|argon2/)
  const listed = await call(srv.url, 'GET', '/api/v1/links', { token: user.token })
  assert.not.match(listed.text, /sesame|argon2/)
  const [row] = await srv.service.db.sql<{ password_hash: string }[]>`select password_hash from links where code = ${res.body.code}`
  assert.match(row!.password_hash, /^\$argon2id\$/, 'stored as argon2id')
})

test('curl and API clients get 401 LINK_PASSWORD_REQUIRED to GET and HEAD; nothing is counted', async ({ srv, user }) => {
  const code = await passwordLink(srv, user)
  const res = await call(srv.url, 'GET', `/r/${code}`)
  assertError(res, 401, 'LINK_PASSWORD_REQUIRED')
  assert.is(res.headers.get('vary'), 'Accept')
  assert.is(res.headers.get('location'), null)
  assert.is((await call(srv.url, 'HEAD', `/r/${code}`)).status, 401)
  await srv.service.deps.visits.flush()
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })).body.visits, 0)
})

test('a browser gets a 401 page with a form posting to /r/{code}/unlock, no script, and nothing of the destination', async ({ srv, user }) => {
  const code = await passwordLink(srv, user)
  const page = await call(srv.url, 'GET', `/r/${code}`, { headers: BROWSER })
  assert.is(page.status, 401)
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
  // The right password's 302 leads anywhere, and browsers hold form-action to that redirect too.
  assert.match(page.headers.get('content-security-policy') ?? '', /form-action http: https:/)
  assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/)
  // Relative: from /r/{code} and, after a wrong one, from /r/{code}/unlock, it reaches /r/{code}/unlock.
  assert.match(page.text, new RegExp(`<form method="post" action="${code}/unlock">`))
  const again = await postForm(srv, code, 'password=nope-nope')
  assert.match(again.text, /<form method="post" action="unlock">/)
  assert.match(page.text, /<input id="password" name="password" type="password"/)
  assert.match(page.text, /<label for="password">/)
  assert.not.match(page.text, /<script|example\.com/i)
  assert.is(page.headers.get('set-cookie'), null)
})

test('the right password, as JSON or as the form, gives the 302, counts one visit and sets no cookie', async ({ srv, user }) => {
  const code = await passwordLink(srv, user)
  const json = await unlock(srv, code, PASSWORD)
  assert.equal([json.status, json.headers.get('location'), json.headers.get('set-cookie')], [302, 'https://example.com/secret', null])
  const form = await postForm(srv, code, `password=${encodeURIComponent(PASSWORD)}`)
  assert.equal([form.status, form.headers.get('location'), form.headers.get('set-cookie')], [302, 'https://example.com/secret', null])
  // no cookie: the next visit asks again
  assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 401)
  await srv.service.deps.visits.flush()
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })).body.visits, 2)
})

test('a wrong or missing password answers 401 again: the form saying so for a browser, the JSON otherwise', async ({ srv, user }) => {
  const code = await passwordLink(srv, user)
  const wrong = await unlock(srv, code, 'not the password')
  assertError(wrong, 401, 'LINK_PASSWORD_REQUIRED')
  assert.match(wrong.body.message, /not right/)
  assertError(await unlock(srv, code, undefined), 401, 'LINK_PASSWORD_REQUIRED')
  assertFieldErrors(await unlock(srv, code, 12345678), [['password', 'TYPE']])
  const page = await postForm(srv, code, 'password=nope-nope')
  assert.is(page.status, 401)
  assert.match(page.text, /not right/)
  assert.match(page.text, /aria-invalid="true"/)
  assertError(await call(srv.url, 'POST', `/r/${code}/unlock`, { body: 'password=x', headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE')
})

test('/r/{code} is GET and HEAD only: a POST is 405 with Allow: GET, HEAD before anything else is read', async ({ srv, user }) => {
  const code = await passwordLink(srv, user)
  for (const res of [
    await call(srv.url, 'POST', `/r/${code}`, { body: { password: PASSWORD } }),
    await call(srv.url, 'POST', `/r/${code}`, { body: 'password=x', headers: { 'content-type': 'text/plain' } }),
    await call(srv.url, 'PUT', `/r/${code}`, { body: { password: PASSWORD } }),
  ]) {
    assertError(res, 405, 'METHOD_NOT_ALLOWED')
    assert.is(res.headers.get('allow'), 'GET, HEAD')
  }
})

test('ten tries a minute from one address, refused with 429 and Retry-After before hashing; another address still opens the link', async ({ srv, user }) => {
  const code = await passwordLink(srv, user)
  const ip = randomIp()
  // 30 at once: the address's ten are taken first, whatever the order of the answers.
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => unlock(srv, code, `wrong guess ${i}`, ip)))
  const statuses = answers.map((r) => r.status).sort()
  assert.equal([statuses.filter((s) => s === 401).length, statuses.filter((s) => s === 429).length], [10, 20])
  const refused = answers.find((r) => r.status === 429)!
  assertError(refused, 429, 'RATE_LIMIT_EXCEEDED')
  assert.ok(Number(refused.headers.get('retry-after')) >= 1)
  // The right password from this address waits too; from another it opens the link at once.
  assert.is((await unlock(srv, code, PASSWORD, ip)).status, 429)
  assert.is((await unlock(srv, code, PASSWORD)).status, 302)
  // A browser gets the form again, saying how long to wait.
  const page = await postForm(srv, code, 'password=nope-nope', { 'x-forwarded-for': ip })
  assert.is(page.status, 429)
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(page.text, /Too many tries\. Wait \d+ seconds?/)
  assert.ok(Number(page.headers.get('retry-after')) >= 1)
})

test('once a link has had ten wrong guesses, an address that guessed wrong is refused; one that never did still opens it', async ({ srv, user }) => {
  const code = await passwordLink(srv, user)
  const guessers = Array.from({ length: 10 }, () => randomIp())
  for (const ip of guessers) assert.is((await unlock(srv, code, 'wrong guess', ip)).status, 401)
  for (const ip of guessers) assertError(await unlock(srv, code, 'another guess', ip), 429, 'RATE_LIMIT_EXCEEDED')
  assert.is((await unlock(srv, code, 'a first guess from a new address')).status, 401)
  assert.is((await unlock(srv, code, PASSWORD)).status, 302)
  // Another link is not touched by this one's guesses.
  const other = await passwordLink(srv, user)
  assert.is((await unlock(srv, other, PASSWORD, guessers[0])).status, 302)
})

test('the owner changes or removes the password; a cap still holds behind it', async ({ srv, user }) => {
  const code = await passwordLink(srv, user, { max_visits: 1 })
  assert.is((await unlock(srv, code, PASSWORD)).status, 302)
  assertError(await unlock(srv, code, PASSWORD), 410, 'LINK_EXHAUSTED')
  assert.is((await patch(srv, user.token, code, { max_visits: null, password: 'another password' })).status, 200)
  assert.is((await unlock(srv, code, PASSWORD)).status, 401)
  assert.is((await unlock(srv, code, 'another password')).status, 302)
  const removed = await patch(srv, user.token, code, { password: null })
  assert.is(removed.body.password_protected, false)
  assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 302)
  assertFieldErrors(await patch(srv, user.token, code, { password: 'short' }), [['password', 'TOO_SHORT']])
})

test('a deleted link keeps no password hash in its tombstone', async ({ srv, user }) => {
  const code = await passwordLink(srv, user)
  assert.is((await call(srv.url, 'DELETE', `/api/v1/links/${code}`, { token: user.token })).status, 204)
  const [row] = await srv.service.db.sql<{ password_hash: string | null }[]>`select password_hash from links where code = ${code}`
  assert.is(row!.password_hash, null)
  assertError(await unlock(srv, code, PASSWORD), 404, 'LINK_NOT_FOUND')
})

test.run()
