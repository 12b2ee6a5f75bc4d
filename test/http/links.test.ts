// /api/v1/links (spec §2, §4, §8; contract §2, §4): create, list, read, change, delete, the
// 50-link cap and the url and code rules, black-box over HTTP.
import { randomInt } from 'node:crypto'
import * as assert from 'uvu/assert'
import { assertError, assertQueryError, call, newLink, newUser, urlOfBytes, type Res } from '../helpers/api.js'
import { serverSuite, type TestServer } from '../helpers/server.js'

const BASE_URL = 'https://sho.rt'
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const CODE = /^[0-9A-Za-z]{8}$/
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const LINK_FIELDS = ['code', 'conversions', 'created_at', 'description', 'disabled', 'expires_at', 'health', 'image_url', 'last_visited_at', 'max_visits', 'password_protected', 'promote_winner', 'rules', 'short_url', 'starts_at', 'tags', 'title', 'updated_at', 'url', 'variants', 'visits', 'visits_left']

/** A random, well-formed custom code (62^8 of them: no clash with another test). */
function randomCode(): string {
  let code = ''
  for (let i = 0; i < 8; i++) code += BASE62[randomInt(62)]
  return code
}

/** Asserts the exact link object of contract §4 for a fresh link. */
function assertFreshLink(link: any, url: string): void {
  assert.equal(Object.keys(link).sort(), LINK_FIELDS)
  assert.ok(CODE.test(link.code), `code ${link.code}`)
  assert.is(link.url, url)
  assert.is(link.short_url, `${BASE_URL}/r/${link.code}`)
  assert.ok(TIMESTAMP.test(link.created_at), `created_at ${link.created_at}`)
  assert.ok(TIMESTAMP.test(link.updated_at), `updated_at ${link.updated_at}`)
  assert.is(link.visits, 0)
  assert.is(link.last_visited_at, null)
  assert.is(link.expires_at, null)
  assert.is(link.disabled, false)
}

/** Asserts a 422 INVALID_FORM_BODY whose first field error is this field and code. */
function assertFieldError(res: Res, field: string, code?: string): void {
  assertError(res, 422, 'INVALID_FORM_BODY')
  assert.ok(Array.isArray(res.body.errors) && res.body.errors.length > 0, `errors listed: ${res.text}`)
  assert.is(res.body.errors[0].field, field, res.text)
  if (code !== undefined) assert.is(res.body.errors[0].code, code, res.text)
}

const create = (srv: TestServer, token: string, body: unknown) => call(srv.url, 'POST', '/api/v1/links', { token, body })
const list = async (srv: TestServer, token: string): Promise<any[]> => {
  const res = await call(srv.url, 'GET', '/api/v1/links', { token })
  assert.is(res.status, 200, res.text)
  return res.body.links
}

// =============================================================================================

const post = serverSuite('POST /api/v1/links', { BASE_URL })

// contract §4: POST {"url"} → 201, Location: /api/v1/links/{code}, the link; short_url = {BASE_URL}/r/{code}
post('creates a link: 201, Location, and the full link object with visits 0', async ({ srv }) => {
  const user = await newUser(srv.url)
  const before = Date.now()
  const res = await create(srv, user.token, { url: 'https://example.com/a?b=c#d' })
  assert.is(res.status, 201, res.text)
  assert.is(res.headers.get('content-type'), 'application/json; charset=utf-8')
  assertFreshLink(res.body, 'https://example.com/a?b=c#d')
  assert.is(res.headers.get('location'), `/api/v1/links/${res.body.code}`)
  // created now (same machine clock, generous slack)
  assert.ok(Math.abs(Date.parse(res.body.created_at) - before) < 60_000, res.body.created_at)
  assert.ok(Date.parse(res.body.updated_at) >= Date.parse(res.body.created_at))
})

// contract §4: Location names the new link
post('the Location path answers with the same link', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await create(srv, user.token, { url: 'https://example.com/loc' })
  const got = await call(srv.url, 'GET', res.headers.get('location')!, { token: user.token })
  assert.is(got.status, 200)
  assert.equal(got.body, res.body)
})

// contract §4: generated codes are 8 characters from [0-9A-Za-z]
post('generated codes are 8 Base62 characters and differ from each other', async ({ srv }) => {
  const user = await newUser(srv.url)
  const codes = new Set<string>()
  for (let i = 0; i < 10; i++) {
    const link = await newLink(srv.url, user.token, `https://example.com/${i}`)
    assert.ok(CODE.test(link.code), link.code)
    codes.add(link.code)
  }
  assert.is(codes.size, 10)
})

// contract §4: the new link redirects at once
post('a new link redirects at once', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token, 'https://example.com/now')
  const res = await call(srv.url, 'GET', `/r/${link.code}`)
  assert.is(res.status, 302)
  assert.is(res.headers.get('location'), 'https://example.com/now')
})

// contract §4: a requested code must be exactly 8 Base62 characters
post('a requested code of 8 Base62 characters is used as the code', async ({ srv }) => {
  const user = await newUser(srv.url)
  const code = randomCode()
  const res = await create(srv, user.token, { url: 'https://example.com/custom', code })
  assert.is(res.status, 201, res.text)
  assertFreshLink(res.body, 'https://example.com/custom')
  assert.is(res.body.code, code)
  assert.is(res.body.short_url, `https://sho.rt/r/${code}`)
  assert.is(res.headers.get('location'), `/api/v1/links/${code}`)
  const r = await call(srv.url, 'GET', `/r/${code}`)
  assert.is(r.status, 302)
  assert.is(r.headers.get('location'), 'https://example.com/custom')
})

// contract §5: codes are case-sensitive, so codes differing only in case are different codes
post('codes that differ only in letter case are different codes', async ({ srv }) => {
  const user = await newUser(srv.url)
  const lower = 'q' + randomCode().slice(1).toLowerCase()
  const upper = lower.toUpperCase()
  const a = await create(srv, user.token, { url: 'https://example.com/lower', code: lower })
  const b = await create(srv, user.token, { url: 'https://example.com/upper', code: upper })
  assert.is(a.status, 201, a.text)
  assert.is(b.status, 201, b.text)
  assert.is((await call(srv.url, 'GET', `/r/${lower}`)).headers.get('location'), 'https://example.com/lower')
  assert.is((await call(srv.url, 'GET', `/r/${upper}`)).headers.get('location'), 'https://example.com/upper')
})

// contract §4: a requested code that is not exactly 8 Base62 characters → 422 (field "code")
post('a requested code of 7 or 9 characters, with "-" or non-ASCII, is 422 on field code', async ({ srv }) => {
  const user = await newUser(srv.url)
  const base = randomCode()
  for (const code of [base.slice(0, 7), base + 'x', base.slice(0, 4) + '-' + base.slice(5), base.slice(0, 7) + 'é', base.slice(0, 7) + '😀', '', 12345678]) {
    const res = await create(srv, user.token, { url: 'https://example.com/', code })
    assertFieldError(res, 'code')
  }
  // nothing was created
  assert.equal(await list(srv, user.token), [])
})

// contract §2: 409 CODE_TAKEN: requested custom code is in use
post('a code in use, by anyone, is 409 CODE_TAKEN', async ({ srv }) => {
  const owner = await newUser(srv.url)
  const other = await newUser(srv.url)
  const code = randomCode()
  assert.is((await create(srv, owner.token, { url: 'https://example.com/first', code })).status, 201)
  assertError(await create(srv, owner.token, { url: 'https://example.com/again', code }), 409, 'CODE_TAKEN')
  assertError(await create(srv, other.token, { url: 'https://example.com/theirs', code }), 409, 'CODE_TAKEN')
  // the original is untouched
  const r = await call(srv.url, 'GET', `/r/${code}`)
  assert.is(r.headers.get('location'), 'https://example.com/first')
  assert.equal(await list(srv, other.token), [])
})

// contract §4: DELETE → the code then answers 404 and is never reassigned (409 CODE_TAKEN: "or was used before")
post('a deleted code is 409 CODE_TAKEN forever and /r/ answers 404', async ({ srv }) => {
  const owner = await newUser(srv.url)
  const other = await newUser(srv.url)
  const code = randomCode()
  assert.is((await create(srv, owner.token, { url: 'https://example.com/gone', code })).status, 201)
  assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 302) // warm any cache
  assert.is((await call(srv.url, 'DELETE', `/api/v1/links/${code}`, { token: owner.token })).status, 204)
  assertError(await create(srv, owner.token, { url: 'https://example.com/back', code }), 409, 'CODE_TAKEN')
  assertError(await create(srv, other.token, { url: 'https://example.com/mine', code }), 409, 'CODE_TAKEN')
  assertError(await call(srv.url, 'GET', `/r/${code}`), 404, 'LINK_NOT_FOUND')
})

// contract §1: unknown request fields are ignored
post('unknown and read-only fields in the body are ignored', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await create(srv, user.token, {
    url: 'https://example.com/ro',
    visits: 99,
    short_url: 'https://evil.example/',
    created_at: '2000-01-01T00:00:00.000Z',
    owner: 'someone',
  })
  assert.is(res.status, 201, res.text)
  assertFreshLink(res.body, 'https://example.com/ro')
  assert.is.not(res.body.created_at, '2000-01-01T00:00:00.000Z')
})

// contract §2: a field missing or of the wrong type → 422 INVALID_FORM_BODY with REQUIRED / TYPE
post('a missing url is 422 REQUIRED and a non-string url is 422 TYPE', async ({ srv }) => {
  const user = await newUser(srv.url)
  assertFieldError(await create(srv, user.token, {}), 'url', 'REQUIRED')
  assertFieldError(await create(srv, user.token, { code: randomCode() }), 'url', 'REQUIRED')
  assertFieldError(await create(srv, user.token, { url: null }), 'url', 'REQUIRED')
  assertFieldError(await create(srv, user.token, { url: 42 }), 'url', 'TYPE')
  assertFieldError(await create(srv, user.token, { url: { href: 'https://e.com/' } }), 'url', 'TYPE')
  assert.equal(await list(srv, user.token), [])
})

// spec §7 / contract §2: malformed JSON or a non-object body → 422 INVALID_FORM_BODY; no JSON media type → 415
post('a malformed body is 422 INVALID_FORM_BODY and a non-JSON media type is 415', async ({ srv }) => {
  const user = await newUser(srv.url)
  assertError(await create(srv, user.token, '{"url":'), 422, 'INVALID_FORM_BODY')
  assertError(await create(srv, user.token, '["https://example.com/"]'), 422, 'INVALID_FORM_BODY')
  const text = await call(srv.url, 'POST', '/api/v1/links', {
    token: user.token,
    body: '{"url":"https://example.com/"}',
    headers: { 'content-type': 'text/plain' },
  })
  assertError(text, 415, 'UNSUPPORTED_MEDIA_TYPE')
  assert.equal(await list(srv, user.token), [])
})

// spec §5 / contract §2: missing or bad bearer → 401 UNAUTHORIZED with WWW-Authenticate: Bearer
post('without a valid token it is 401 UNAUTHORIZED', async ({ srv }) => {
  const none = await call(srv.url, 'POST', '/api/v1/links', { body: { url: 'https://example.com/' } })
  assertError(none, 401, 'UNAUTHORIZED')
  assert.is(none.headers.get('www-authenticate'), 'Bearer')
  const bad = await call(srv.url, 'POST', '/api/v1/links', { token: 'A'.repeat(43), body: { url: 'https://example.com/' } })
  assertError(bad, 401, 'UNAUTHORIZED')
})

post.run()

// =============================================================================================

const urls = serverSuite('POST /api/v1/links: url rules', { BASE_URL })

const ACCEPTED = [
  'https://example.com/',
  'http://example.com',
  'HTTPS://EXAMPLE.COM/x',
  'http://127.0.0.1/',
  'http://192.168.0.1:8080/x',
  'http://[::1]:3000/',
  'https://example.com:8443/a',
  'https://exämple.com/ü?q=ä#frag',
  'https://xn--exmple-cua.com/',
  'https://例え.テスト/パス',
  'https://example.com/a?b=c&d=e#frag',
  'https://example.com/?q=a%20b&r=%zz',
  'https://example.com/a/../b/./c',
  'https://example.com/emoji/😀',
]

// contract §4: an absolute http or https URL with a host, stored exactly as sent
urls('accepts http(s) URLs in any letter case, IPs, ports, IDN, query and fragment, stored exactly as sent', async ({ srv }) => {
  const user = await newUser(srv.url)
  for (const url of ACCEPTED) {
    const res = await create(srv, user.token, { url })
    assert.is(res.status, 201, `${url}: ${res.text}`)
    assert.is(res.body.url, url)
    const got = await call(srv.url, 'GET', `/api/v1/links/${res.body.code}`, { token: user.token })
    assert.is(got.body.url, url)
  }
})

// contract §4: stored exactly as sent (no normalisation): the redirect's Location keeps ASCII as is
urls('an uppercase URL redirects unchanged', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token, 'HTTPS://EXAMPLE.COM/x')
  const r = await call(srv.url, 'GET', `/r/${link.code}`)
  assert.is(r.status, 302)
  assert.is(r.headers.get('location'), 'HTTPS://EXAMPLE.COM/x')
})

// contract §4: stored exactly as sent: the response JSON carries the same bytes
urls('the url comes back byte-identical, escapes and all', async ({ srv }) => {
  const user = await newUser(srv.url)
  const url = "https://exämple.com/a%2Fb/ü/😀?q=\"x\"&r='y'&s=<t>#f"
  const res = await create(srv, user.token, { url })
  assert.is(res.status, 201, res.text)
  assert.ok(Buffer.from(res.body.url, 'utf8').equals(Buffer.from(url, 'utf8')))
  const listed = await list(srv, user.token)
  assert.is(listed[0].url, url)
})

// spec §8: URL size 4096 UTF-8 bytes
urls('a url of 4096 bytes is accepted; 4097 bytes is 422 TOO_LONG', async ({ srv }) => {
  const user = await newUser(srv.url)
  const max = urlOfBytes(4096)
  const ok = await create(srv, user.token, { url: max })
  assert.is(ok.status, 201, ok.text)
  assert.is(ok.body.url, max)
  assertFieldError(await create(srv, user.token, { url: urlOfBytes(4097) }), 'url', 'TOO_LONG')
})

// spec §8: the limit is in UTF-8 bytes, so multibyte characters count as several
urls('multibyte characters count their UTF-8 bytes', async ({ srv }) => {
  const user = await newUser(srv.url)
  const max = urlOfBytes(4096, 'é') // ≈ 2058 characters
  const ok = await create(srv, user.token, { url: max })
  assert.is(ok.status, 201, ok.text)
  assert.is(ok.body.url, max)
  const over = urlOfBytes(4097, 'é')
  assert.ok(over.length < 4096)
  assertFieldError(await create(srv, user.token, { url: over }), 'url', 'TOO_LONG')
  const emoji = 'https://example.com/' + '😀'.repeat(1020) // 4100 bytes, 2060 UTF-16 units
  assertFieldError(await create(srv, user.token, { url: emoji }), 'url', 'TOO_LONG')
})

// contract §4: url is a string of 1 to 4096 UTF-8 bytes
urls('an empty url is 422 TOO_SHORT', async ({ srv }) => {
  const user = await newUser(srv.url)
  assertFieldError(await create(srv, user.token, { url: '' }), 'url', 'TOO_SHORT')
})

const REJECTED: Array<[string, string]> = [
  ['ftp', 'ftp://example.com/file'],
  ['javascript', 'javascript:alert(1)'],
  ['mailto', 'mailto:a@example.com'],
  ['data', 'data:text/html,<b>x</b>'],
  ['relative path', '/x'],
  ['scheme-relative', '//example.com/x'],
  ['no slashes after the scheme', 'http:example.com'],
  ['scheme only', 'http://'],
  ['space', 'https://example.com/a b'],
  ['leading space', ' https://example.com/'],
  ['trailing newline', 'https://example.com/\n'],
  ['tab', 'https://example.com/\tx'],
  ['newline', 'https://exa\nmple.com/'],
  ['U+00A0', 'https://example.com/\u00a0x'],
  ['U+2028', 'https://example.com/\u2028x'],
  ['control U+0001', 'https://example.com/\u0001x'],
  ['DEL', 'https://example.com/\u007f'],
  ['U+0000', 'https://example.com/\u0000x'],
  ['user and password', 'https://user:pass@host.example/'],
  ['user only', 'https://user@host.example/'],
  ['lone surrogate', 'https://example.com/\ud800'],
]

// contract §4: absolute http(s) with a host; no whitespace or control characters; no user-info;
// contract §1: a lone surrogate or U+0000 makes the field invalid
urls('refuses other schemes, relative URLs, white space, controls, U+0000, user-info and lone surrogates with 422 on url', async ({ srv }) => {
  const user = await newUser(srv.url)
  for (const [why, url] of REJECTED) {
    const res = await create(srv, user.token, { url })
    assert.is(res.status, 422, `${why}: ${res.text}`)
    assertFieldError(res, 'url', 'INVALID')
  }
  assert.equal(await list(srv, user.token), [])
})

// contract §1: a lone surrogate sent as raw JSON text (\ud800 escape) is refused too
urls('a lone surrogate written as a JSON escape is 422 on url', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await create(srv, user.token, '{"url":"https://example.com/\\udc00"}')
  assertFieldError(res, 'url', 'INVALID')
})

urls.run()

// =============================================================================================

const cap = serverSuite('POST /api/v1/links: the 50-link cap', { BASE_URL })

// spec §2, §8: each account may own at most 50 links; contract §2: creating while owning 50 → 409 LINK_LIMIT_EXCEEDED
cap('the 51st link is 409 LINK_LIMIT_EXCEEDED; after a delete one more fits', async ({ srv }) => {
  const user = await newUser(srv.url)
  const codes: string[] = []
  for (let i = 0; i < 50; i++) {
    const res = await create(srv, user.token, { url: `https://example.com/${i}` })
    assert.is(res.status, 201, `link ${i + 1}: ${res.text}`)
    codes.push(res.body.code)
  }
  assertError(await create(srv, user.token, { url: 'https://example.com/51' }), 409, 'LINK_LIMIT_EXCEEDED')
  // a custom code does not get around the cap either
  assertError(await create(srv, user.token, { url: 'https://example.com/51', code: randomCode() }), 409, 'LINK_LIMIT_EXCEEDED')
  assert.is((await list(srv, user.token)).length, 50)

  assert.is((await call(srv.url, 'DELETE', `/api/v1/links/${codes[0]}`, { token: user.token })).status, 204)
  const again = await create(srv, user.token, { url: 'https://example.com/again' })
  assert.is(again.status, 201, again.text)
  assertError(await create(srv, user.token, { url: 'https://example.com/52' }), 409, 'LINK_LIMIT_EXCEEDED')
  assert.is((await list(srv, user.token)).length, 50)
})

// spec §2: the cap is per account
cap("one account's full quota does not limit another", async ({ srv }) => {
  const full = await newUser(srv.url)
  for (let i = 0; i < 50; i++) await newLink(srv.url, full.token, `https://example.com/${i}`)
  assertError(await create(srv, full.token, { url: 'https://example.com/x' }), 409, 'LINK_LIMIT_EXCEEDED')
  const other = await newUser(srv.url)
  assert.is((await create(srv, other.token, { url: 'https://example.com/x' })).status, 201)
})

// contract §4: the 50-link cap holds under concurrency: 100 parallel creates by one user leave exactly 50
cap('100 parallel creates by a fresh user leave exactly 50 links', async ({ srv }) => {
  const user = await newUser(srv.url)
  const results = await Promise.all(
    Array.from({ length: 100 }, (_, i) => create(srv, user.token, { url: `https://example.com/p${i}` })),
  )
  const created = results.filter((r) => r.status === 201)
  const refused = results.filter((r) => r.status !== 201)
  assert.is(created.length, 50)
  for (const r of refused) assertError(r, 409, 'LINK_LIMIT_EXCEEDED')
  const links = await list(srv, user.token)
  assert.is(links.length, 50)
  assert.equal(links.map((l) => l.code).sort(), created.map((r) => r.body.code).sort())
})

cap.run()

// =============================================================================================

const index = serverSuite('GET /api/v1/links', { BASE_URL })

// contract §4: GET /api/v1/links → 200 {"links": [...]}
index('a new account has an empty list', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await call(srv.url, 'GET', '/api/v1/links', { token: user.token })
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), 'application/json; charset=utf-8')
  assert.equal(res.body, { links: [] })
})

// contract §4: newest first
index('lists the links newest first, each as the full link object', async ({ srv }) => {
  const user = await newUser(srv.url)
  const made = []
  for (const path of ['one', 'two', 'three']) made.push(await newLink(srv.url, user.token, `https://example.com/${path}`))
  const res = await call(srv.url, 'GET', '/api/v1/links', { token: user.token })
  assert.is(res.status, 200)
  assert.equal(Object.keys(res.body), ['links'])
  assert.equal(res.body.links, made.reverse())
})

// contract §4: links are private to their owner
index("lists only the caller's links", async ({ srv }) => {
  const a = await newUser(srv.url)
  const b = await newUser(srv.url)
  const la = await newLink(srv.url, a.token, 'https://example.com/a')
  const lb1 = await newLink(srv.url, b.token, 'https://example.com/b1')
  const lb2 = await newLink(srv.url, b.token, 'https://example.com/b2')
  assert.equal((await list(srv, a.token)).map((l) => l.code), [la.code])
  assert.equal((await list(srv, b.token)).map((l) => l.code), [lb2.code, lb1.code])
})

// contract §4: a deleted link is gone
index('a deleted link is no longer listed', async ({ srv }) => {
  const user = await newUser(srv.url)
  const first = await newLink(srv.url, user.token, 'https://example.com/1')
  const second = await newLink(srv.url, user.token, 'https://example.com/2')
  assert.is((await call(srv.url, 'DELETE', `/api/v1/links/${first.code}`, { token: user.token })).status, 204)
  assert.equal((await list(srv, user.token)).map((l) => l.code), [second.code])
})

// contract §4: a changed link keeps its place and shows the new url
index('a changed link shows its new url and keeps its place', async ({ srv }) => {
  const user = await newUser(srv.url)
  const first = await newLink(srv.url, user.token, 'https://example.com/1')
  const second = await newLink(srv.url, user.token, 'https://example.com/2')
  const patched = await call(srv.url, 'PATCH', `/api/v1/links/${first.code}`, { token: user.token, body: { url: 'https://example.com/1b' } })
  assert.is(patched.status, 200)
  assert.equal(await list(srv, user.token), [second, patched.body])
})

// GET /api/v1/links?format=csv (or Accept: text/csv): the owner's links as CSV, RFC 4180
index('?format=csv exports the caller’s links as RFC 4180 CSV, a header row then one row per link', async ({ srv }) => {
  const user = await newUser(srv.url)
  const plain = await newLink(srv.url, user.token, 'https://example.com/plain')
  const quoted = await newLink(srv.url, user.token, 'https://example.com/a,b?q="x"')
  for (const res of [
    await call(srv.url, 'GET', '/api/v1/links?format=csv', { token: user.token }),
    await call(srv.url, 'GET', '/api/v1/links', { token: user.token, headers: { accept: 'text/html, text/csv;q=0.9' } }),
  ]) {
    assert.is(res.status, 200, res.text)
    assert.is(res.headers.get('content-type'), 'text/csv; charset=utf-8; header=present')
    assert.is(res.headers.get('content-disposition'), 'attachment; filename="links.csv"')
    const row = (l: typeof plain, url: string) =>
      [l.code, url, l.short_url, l.created_at, l.updated_at, 0, '', '', 'false', '', '', '', 'false', 'unchecked'].join(',')
    assert.is(res.text, [
      'code,url,short_url,created_at,updated_at,visits,last_visited_at,expires_at,disabled,starts_at,max_visits,visits_left,password_protected,health',
      row(quoted, '"https://example.com/a,b?q=""x"""'),
      row(plain, 'https://example.com/plain'),
      '',
    ].join('\r\n'))
  }
  assertQueryError(await call(srv.url, 'GET', '/api/v1/links?format=pdf', { token: user.token }), ['format'])
})

// OWASP "CSV Injection": a cell a spreadsheet would run as a formula is written as text. The API
// only takes http(s) URLs, so the row is written as an older release or a hand edit could have.
index('a URL starting with = (or +, -, @) is escaped in the CSV with a leading apostrophe', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token, 'https://example.com/formula')
  const formula = '=HYPERLINK("https://evil.example","open")'
  await srv.service.db.sql`update links set url = ${formula} where code = ${link.code}`
  const res = await call(srv.url, 'GET', '/api/v1/links?format=csv', { token: user.token })
  const cells = res.text.split('\r\n')[1]!
  assert.ok(cells.startsWith(`${link.code},"'=HYPERLINK(""https://evil.example"",""open"")",`), cells)
})

// spec §5: missing or malformed bearer → 401 UNAUTHORIZED
index('without a valid token it is 401 UNAUTHORIZED', async ({ srv }) => {
  assertError(await call(srv.url, 'GET', '/api/v1/links'), 401, 'UNAUTHORIZED')
  assertError(await call(srv.url, 'GET', '/api/v1/links', { token: 'x'.repeat(43) }), 401, 'UNAUTHORIZED')
  assertError(await call(srv.url, 'GET', '/api/v1/links', { headers: { authorization: 'Basic dTpw' } }), 401, 'UNAUTHORIZED')
})

index.run()

// =============================================================================================

const one = serverSuite('GET /api/v1/links/{code}', { BASE_URL })

// contract §4: GET /api/v1/links/{code} → 200 the link
one('answers 200 with the link', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token, 'https://example.com/one')
  const res = await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), 'application/json; charset=utf-8')
  assertFreshLink(res.body, 'https://example.com/one')
  assert.equal(res.body, link)
})

// contract §4: links are private: another account's code answers 404 LINK_NOT_FOUND
one("another account's code is 404 LINK_NOT_FOUND", async ({ srv }) => {
  const owner = await newUser(srv.url)
  const other = await newUser(srv.url)
  const link = await newLink(srv.url, owner.token)
  assertError(await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: other.token }), 404, 'LINK_NOT_FOUND')
})

// contract §2: LINK_NOT_FOUND: unknown code, malformed code
one('an unknown or malformed code is 404 LINK_NOT_FOUND', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  for (const code of [randomCode(), 'short', 'toolong123', 'abc-defg', '%41bcdefg', link.code.slice(0, 7), link.code + 'x', 'a%20bcdefg']) {
    assertError(await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token }), 404, 'LINK_NOT_FOUND')
  }
})

// contract §5: codes are case-sensitive
one('a code in another letter case is a different (unknown) code', async ({ srv }) => {
  const user = await newUser(srv.url)
  const code = 'a' + randomCode().slice(1)
  assert.is((await create(srv, user.token, { url: 'https://example.com/', code })).status, 201)
  const flipped = 'A' + code.slice(1)
  assertError(await call(srv.url, 'GET', `/api/v1/links/${flipped}`, { token: user.token }), 404, 'LINK_NOT_FOUND')
})

// spec §5: no token → 401
one('without a token it is 401 UNAUTHORIZED', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  assertError(await call(srv.url, 'GET', `/api/v1/links/${link.code}`), 401, 'UNAUTHORIZED')
})

// contract §4: visits counts GET redirects; the single-link view reports them
one('reports visits and last_visited_at once redirects were served and flushed', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  const before = Date.now()
  await call(srv.url, 'GET', `/r/${link.code}`)
  await call(srv.url, 'GET', `/r/${link.code}`)
  await srv.service.deps.visits.flush()
  const res = await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })
  assert.is(res.body.visits, 2)
  assert.ok(TIMESTAMP.test(res.body.last_visited_at), res.body.last_visited_at)
  assert.ok(Date.parse(res.body.last_visited_at) >= before - 1_000)
})

one.run()

// =============================================================================================

const patch = serverSuite('PATCH /api/v1/links/{code}', { BASE_URL })

const patchUrl = (srv: TestServer, token: string | undefined, code: string, body: unknown) =>
  call(srv.url, 'PATCH', `/api/v1/links/${code}`, token === undefined ? { body } : { token, body })

// contract §4: PATCH {"url"} → 200 the link with the new url and a new updated_at; redirects use the new url at once
patch('changes the url: 200, a later updated_at, the same created_at, and redirects follow at once', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token, 'https://example.com/old')
  // warm the redirect (and any cache) with the old url
  assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).headers.get('location'), 'https://example.com/old')
  const res = await patchUrl(srv, user.token, link.code, { url: 'https://example.com/new' })
  assert.is(res.status, 200, res.text)
  assert.is(res.headers.get('content-type'), 'application/json; charset=utf-8')
  assert.equal(Object.keys(res.body).sort(), LINK_FIELDS)
  assert.is(res.body.code, link.code)
  assert.is(res.body.url, 'https://example.com/new')
  assert.is(res.body.short_url, link.short_url)
  assert.is(res.body.created_at, link.created_at)
  assert.ok(TIMESTAMP.test(res.body.updated_at), res.body.updated_at)
  assert.ok(Date.parse(res.body.updated_at) > Date.parse(link.updated_at), `${res.body.updated_at} > ${link.updated_at}`)
  const r = await call(srv.url, 'GET', `/r/${link.code}`)
  assert.is(r.status, 302)
  assert.is(r.headers.get('location'), 'https://example.com/new')
  const got = await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })
  assert.equal(got.body, res.body)
})

// contract §4: each change gives a new updated_at
patch('two changes in a row give strictly increasing updated_at', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token, 'https://example.com/0')
  const a = await patchUrl(srv, user.token, link.code, { url: 'https://example.com/1' })
  const b = await patchUrl(srv, user.token, link.code, { url: 'https://example.com/2' })
  assert.is(a.status, 200)
  assert.is(b.status, 200)
  assert.ok(Date.parse(a.body.updated_at) > Date.parse(link.updated_at))
  assert.ok(Date.parse(b.body.updated_at) > Date.parse(a.body.updated_at), `${b.body.updated_at} > ${a.body.updated_at}`)
  assert.is(b.body.created_at, link.created_at)
})

// contract §2 order of checks: field validation (422) comes before the operation (404)
patch('an invalid body on a malformed or unknown code answers 422 before 404', async ({ srv }) => {
  const user = await newUser(srv.url)
  for (const code of ['bad', 'ZZZZZZZZ']) {
    const res = await patchUrl(srv, user.token, code, { url: 'not a url' })
    assert.is(res.status, 422, code)
    assert.is(res.body.code, 'INVALID_FORM_BODY', code)
  }
  assert.is((await patchUrl(srv, user.token, 'bad', { url: 'https://example.com/' })).status, 404)
})

// contract §4: a new updated_at, even when the clock has not moved past the last one (here the
// stored updated_at is pushed an hour ahead, as a write in the same millisecond would look)
patch('updated_at moves forward even when the clock is behind the stored value', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  const sql = srv.service.db.sql
  const [ahead] = await sql<{ at: Date }[]>`
    update links set updated_at = now() + interval '1 hour' where code = ${link.code} returning updated_at as at`
  const res = await patchUrl(srv, user.token, link.code, { url: 'https://example.com/later' })
  assert.is(res.status, 200)
  assert.ok(Date.parse(res.body.updated_at) > ahead!.at.getTime(), `${res.body.updated_at} > ${ahead!.at.toISOString()}`)
})

// contract §4: the url is stored exactly as sent; redirects percent-encode non-ASCII
patch('the new url is stored exactly as sent', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  const res = await patchUrl(srv, user.token, link.code, { url: 'HTTPS://Exämple.COM/ü?x=1#y' })
  assert.is(res.status, 200)
  assert.is(res.body.url, 'HTTPS://Exämple.COM/ü?x=1#y')
  assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).headers.get('location'), 'HTTPS://Ex%C3%A4mple.COM/%C3%BC?x=1#y')
})

// contract §1: unknown request fields are ignored (the code is not changed by PATCH)
patch('a code in the PATCH body is ignored', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  const res = await patchUrl(srv, user.token, link.code, { url: 'https://example.com/c', code: randomCode() })
  assert.is(res.status, 200, res.text)
  assert.is(res.body.code, link.code)
})

// contract §2/§4: invalid url → 422; missing url → 422 REQUIRED; the link stays as it was
patch('an invalid url is 422 INVALID and a missing one 422 REQUIRED; the link is unchanged', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token, 'https://example.com/keep')
  assertFieldError(await patchUrl(srv, user.token, link.code, { url: 'javascript:alert(1)' }), 'url', 'INVALID')
  assertFieldError(await patchUrl(srv, user.token, link.code, { url: 'https://user:pass@example.com/' }), 'url', 'INVALID')
  assertFieldError(await patchUrl(srv, user.token, link.code, { url: 'https://example.com/ x' }), 'url', 'INVALID')
  assertFieldError(await patchUrl(srv, user.token, link.code, { url: urlOfBytes(4097) }), 'url', 'TOO_LONG')
  assertFieldError(await patchUrl(srv, user.token, link.code, { url: 7 }), 'url', 'TYPE')
  assertFieldError(await patchUrl(srv, user.token, link.code, {}), 'url', 'REQUIRED')
  const got = await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })
  assert.equal(got.body, link)
  assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).headers.get('location'), 'https://example.com/keep')
})

// contract §4: links are private: another account's code answers 404 LINK_NOT_FOUND
patch("another account's code is 404 LINK_NOT_FOUND and the link is unchanged for its owner", async ({ srv }) => {
  const owner = await newUser(srv.url)
  const other = await newUser(srv.url)
  const link = await newLink(srv.url, owner.token, 'https://example.com/mine')
  assertError(await patchUrl(srv, other.token, link.code, { url: 'https://evil.example/' }), 404, 'LINK_NOT_FOUND')
  const got = await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: owner.token })
  assert.equal(got.body, link)
  assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).headers.get('location'), 'https://example.com/mine')
})

// contract §2: LINK_NOT_FOUND: unknown, deleted or malformed code
patch('an unknown, deleted or malformed code is 404 LINK_NOT_FOUND', async ({ srv }) => {
  const user = await newUser(srv.url)
  const gone = await newLink(srv.url, user.token)
  assert.is((await call(srv.url, 'DELETE', `/api/v1/links/${gone.code}`, { token: user.token })).status, 204)
  for (const code of [randomCode(), gone.code, 'short', 'toolong123', 'abc-defg']) {
    assertError(await patchUrl(srv, user.token, code, { url: 'https://example.com/x' }), 404, 'LINK_NOT_FOUND')
  }
  assertError(await call(srv.url, 'GET', `/r/${gone.code}`), 404, 'LINK_NOT_FOUND')
})

// spec §5: no token → 401
patch('without a token it is 401 UNAUTHORIZED and nothing changes', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token, 'https://example.com/auth')
  assertError(await patchUrl(srv, undefined, link.code, { url: 'https://example.com/x' }), 401, 'UNAUTHORIZED')
  assert.equal((await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })).body, link)
})

patch.run()

// =============================================================================================

const del = serverSuite('DELETE /api/v1/links/{code}', { BASE_URL })

// contract §4: DELETE → 204; the code then answers 404
del('answers 204 with no body; then GET and /r/ answer 404 LINK_NOT_FOUND', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token, 'https://example.com/del')
  assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).status, 302) // warm any cache
  const res = await call(srv.url, 'DELETE', `/api/v1/links/${link.code}`, { token: user.token })
  assert.is(res.status, 204)
  assert.is(res.text, '')
  assert.is(res.headers.get('content-type'), null)
  assertError(await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token }), 404, 'LINK_NOT_FOUND')
  const r = await call(srv.url, 'GET', `/r/${link.code}`)
  assertError(r, 404, 'LINK_NOT_FOUND')
  assert.is(r.headers.get('location'), null)
  assert.is((await call(srv.url, 'HEAD', `/r/${link.code}`)).status, 404)
})

// contract §2: LINK_NOT_FOUND for a deleted link
del('deleting twice: the second is 404 LINK_NOT_FOUND', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  assert.is((await call(srv.url, 'DELETE', `/api/v1/links/${link.code}`, { token: user.token })).status, 204)
  assertError(await call(srv.url, 'DELETE', `/api/v1/links/${link.code}`, { token: user.token }), 404, 'LINK_NOT_FOUND')
})

// contract §4: links are private: another account's code answers 404 LINK_NOT_FOUND
del("another account's code is 404 LINK_NOT_FOUND and the link lives on", async ({ srv }) => {
  const owner = await newUser(srv.url)
  const other = await newUser(srv.url)
  const link = await newLink(srv.url, owner.token, 'https://example.com/stays')
  assertError(await call(srv.url, 'DELETE', `/api/v1/links/${link.code}`, { token: other.token }), 404, 'LINK_NOT_FOUND')
  const got = await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: owner.token })
  assert.is(got.status, 200)
  assert.equal(got.body, link)
  assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).headers.get('location'), 'https://example.com/stays')
})

// contract §2: LINK_NOT_FOUND: unknown or malformed code
del('an unknown or malformed code is 404 LINK_NOT_FOUND', async ({ srv }) => {
  const user = await newUser(srv.url)
  for (const code of [randomCode(), 'short', 'toolong123', 'abc-defg', '%41bcdefg']) {
    assertError(await call(srv.url, 'DELETE', `/api/v1/links/${code}`, { token: user.token }), 404, 'LINK_NOT_FOUND')
  }
})

// contract §4: deleting one link leaves the others
del("deleting one link leaves the owner's other links alone", async ({ srv }) => {
  const user = await newUser(srv.url)
  const a = await newLink(srv.url, user.token, 'https://example.com/a')
  const b = await newLink(srv.url, user.token, 'https://example.com/b')
  assert.is((await call(srv.url, 'DELETE', `/api/v1/links/${a.code}`, { token: user.token })).status, 204)
  assert.equal(await list(srv, user.token), [b])
  assert.is((await call(srv.url, 'GET', `/r/${b.code}`)).headers.get('location'), 'https://example.com/b')
})

// spec §5: no token → 401
del('without a token it is 401 UNAUTHORIZED and the link stays', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  assertError(await call(srv.url, 'DELETE', `/api/v1/links/${link.code}`), 401, 'UNAUTHORIZED')
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })).status, 200)
})

del.run()
