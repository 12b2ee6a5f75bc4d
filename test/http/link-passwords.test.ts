// Password links (issue 25): the password is stored as argon2id and never returned; /r/{code}
// answers 401 (a form for a browser, LINK_PASSWORD_REQUIRED for anything else) until the right
// password is POSTed, as JSON or as the form; wrong guesses are held back as failed logins are.
import * as assert from 'uvu/assert'
import { assertError, assertFieldErrors, call, newUser, randomIp, type User } from '../helpers/api.js'
import { serverSuite, type TestServer } from '../helpers/server.js'

const BROWSER = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }
const PASSWORD = 'open sesame'
const create = (srv: TestServer, token: string, body: unknown) => call(srv.url, 'POST', '/api/v1/links', { token, body })
const patch = (srv: TestServer, token: string, code: string, body: unknown) => call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token, body })
const unlock = (srv: TestServer, code: string, password: unknown, ip = randomIp()) => call(srv.url, 'POST', `/r/${code}`, { body: { password }, ip })
const postForm = (srv: TestServer, code: string, form: string, headers: Record<string, string> = {}) =>
  call(srv.url, 'POST', `/r/${code}`, { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded', ...BROWSER, ...headers } })

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

test('a browser gets a 401 page with a form posting to the same path, no script, and nothing of the destination', async ({ srv, user }) => {
  const code = await passwordLink(srv, user)
  const page = await call(srv.url, 'GET', `/r/${code}`, { headers: BROWSER })
  assert.is(page.status, 401)
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(page.headers.get('content-security-policy') ?? '', /form-action 'self'/)
  assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/)
  assert.match(page.text, new RegExp(`<form method="post" action="${code}">`))
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
  assertError(await call(srv.url, 'POST', `/r/${code}`, { body: 'password=x', headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE')
})

test('five wrong guesses from one address slow the sixth; the right password is never held back', async ({ srv, user }) => {
  const code = await passwordLink(srv, user)
  const ip = randomIp()
  for (let i = 0; i < 5; i++) assert.is((await unlock(srv, code, `wrong guess ${i}`, ip)).status, 401)
  const started = performance.now()
  assert.is((await unlock(srv, code, 'wrong guess 6', ip)).status, 401)
  // The sixth is held back at least 0.5 s (a lower bound: a slow machine only adds to it).
  assert.ok(performance.now() - started >= 450, `the sixth wrong guess took ${(performance.now() - started).toFixed(0)} ms`)
  assert.is((await unlock(srv, code, PASSWORD, ip)).status, 302)
})

test('wrong guesses from many addresses slow the link for everyone guessing', async ({ srv, user }) => {
  const code = await passwordLink(srv, user)
  for (let i = 0; i < 5; i++) assert.is((await unlock(srv, code, `wrong guess ${i}`)).status, 401)
  const started = performance.now()
  assert.is((await unlock(srv, code, 'wrong guess 6')).status, 401)
  assert.ok(performance.now() - started >= 450)
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
