// The app and its HTTP layer (src/app.ts, src/http/), black-box: routing (404/405/HEAD), X-Request-Id, the error shape, media types,
// JSON bodies, the order of checks, CORS and /healthz (spec §4, §5, §7; contract §1, §2, §6, §8).
import * as assert from 'uvu/assert'
import { assertError, call, newLink, newUser, randomIp, type Res } from '../helpers/api.js'
import { header, raw, requestHead } from '../helpers/raw.js'
import { serverSuite } from '../helpers/server.js'

const JSON_TYPE = 'application/json; charset=utf-8'
const GENERATED_ID = /^[0-9a-f]{32}$/
/** 43 base64url characters: shaped like a token, but nobody's. */
const UNKNOWN_TOKEN = 'A'.repeat(43)

/** A comma-separated header as a sorted list of lower-case names. */
function names(value: string | null | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '').sort()
}

/** A POST with raw bytes and exactly the given headers (call() would add a JSON Content-Type). */
async function postBytes(base: string, path: string, body: Buffer | string, headers: Record<string, string>): Promise<Res> {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'x-forwarded-for': randomIp(), ...headers },
    body: typeof body === 'string' ? Buffer.from(body) : body,
  })
  const text = await res.text()
  const parsed: unknown = (res.headers.get('content-type') ?? '').startsWith('application/json') && text !== '' ? JSON.parse(text) : undefined
  return { status: res.status, headers: res.headers, body: parsed, text }
}

// =============================================================================================
const routing = serverSuite('kernel: routing')

// spec §4 rule 2, §7: /api/v1/login does not exist → 404 ROUTE_NOT_FOUND; contract §2: any method
routing('unknown paths answer 404 ROUTE_NOT_FOUND for every method', async ({ srv }) => {
  const paths = [
    '/api/v1/login',
    '/api/v1/users/',
    '/r/',
    '/API/v1/users',
    '/api/v1/Users',
    '/api/v2/users',
    '/api/v1',
    '/api/v1/',
    '/api/v1/links/',
    '/api/v1/links/abcdefgh/extra',
    '/api/v1/users/me/',
    '/r/abcdefgh/x',
    '//api/v1/users',
    '/nothing-here',
  ]
  for (const path of paths) {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      assertError(await call(srv.url, method, path), 404, 'ROUTE_NOT_FOUND', `${method} ${path}`)
    }
    const head = await call(srv.url, 'HEAD', path)
    assert.is(head.status, 404, `HEAD ${path}`)
    assert.is(head.text, '', `HEAD ${path}`)
  }
})

// contract §2: 404 is decided by the path, whatever the body or auth
routing('an unknown path is 404 even with a valid token and a JSON body', async ({ srv }) => {
  const user = await newUser(srv.url)
  assertError(await call(srv.url, 'POST', '/api/v1/login', { token: user.token, body: { username: 'a', password: 'b' } }), 404, 'ROUTE_NOT_FOUND')
  assertError(await call(srv.url, 'POST', '/api/v1/users/', { body: { username: 'ab', password: '12345678', display_name: 'ab' } }), 404, 'ROUTE_NOT_FOUND')
})

// contract §2 (routing): a query string does not change which route answers
routing('a query string does not change routing', async ({ srv }) => {
  const user = await newUser(srv.url)
  assertError(await call(srv.url, 'GET', '/api/v1/login?x=1'), 404, 'ROUTE_NOT_FOUND')
  assertError(await call(srv.url, 'GET', '/api/v1/users/?a=b'), 404, 'ROUTE_NOT_FOUND')
  assertError(await call(srv.url, 'GET', '/r/?code=abcdefgh'), 404, 'ROUTE_NOT_FOUND')
  const health = await call(srv.url, 'GET', '/healthz?verbose=1&x=/api/v1/login')
  assert.is(health.status, 200)
  assert.is(health.body.status, 'ok')
  assert.is(health.body.database, 'ok')
  assert.is(health.body.writes, 'ok')
  assert.is(health.body.change_feed, process.env.DATABASE_URL === undefined ? 'none' : 'up')
  const list = await call(srv.url, 'GET', '/api/v1/links?limit=1', { token: user.token })
  assert.is(list.status, 200)
  assert.ok(Array.isArray(list.body.links))
  assertError(await call(srv.url, 'DELETE', '/api/v1/auth/login?x=1'), 405, 'METHOD_NOT_ALLOWED')
})

// contract §2: 404 for no such path; RFC 9112 3.2.2: absolute-form targets are reduced to their path
routing('absolute-form request targets route by their path', async ({ srv }) => {
  const { host } = new URL(srv.url)
  const unknown = await raw(srv.url, [requestHead([`GET http://${host}/api/v1/login HTTP/1.1`, `Host: ${host}`, 'Connection: close'])])
  assert.is(unknown.status, 404)
  const body = JSON.parse(unknown.body)
  assert.equal(Object.keys(body).sort(), ['code', 'message'])
  assert.is(body.code, 'ROUTE_NOT_FOUND')
  assert.ok(header(unknown.head, 'x-request-id'))
  const trailing = await raw(srv.url, [requestHead([`GET http://${host}/api/v1/users/ HTTP/1.1`, `Host: ${host}`, 'Connection: close'])])
  assert.is(trailing.status, 404)
  assert.is(JSON.parse(trailing.body).code, 'ROUTE_NOT_FOUND')
  const known = await raw(srv.url, [requestHead([`GET http://${host}/healthz?x=1 HTTP/1.1`, `Host: ${host}`, 'Connection: close'])])
  assert.is(known.status, 200)
  assert.is(JSON.parse(known.body).status, 'ok')
  const other = await raw(srv.url, [requestHead(['GET http://other.example/api/v1/nothing HTTP/1.1', `Host: ${host}`, 'Connection: close'])])
  assert.is(other.status, 404)
  assert.is(JSON.parse(other.body).code, 'ROUTE_NOT_FOUND')
})

// contract §2: 405 METHOD_NOT_ALLOWED on a known path with another method; carries Allow
routing('a known path with another method answers 405 with an Allow header', async ({ srv }) => {
  const cases: Array<[string, string, string[]]> = [
    ['DELETE', '/api/v1/auth/login', ['POST']],
    ['GET', '/api/v1/auth/login', ['POST']],
    ['GET', '/api/v1/auth/logout', ['POST']],
    ['PUT', '/api/v1/links', ['GET', 'HEAD', 'POST']],
    ['DELETE', '/api/v1/links', ['GET', 'HEAD', 'POST']],
    ['GET', '/api/v1/users', ['POST']],
    ['PUT', '/api/v1/users/me', ['DELETE', 'GET', 'HEAD', 'PATCH']],
    ['POST', '/api/v1/links/abcdefgh', ['DELETE', 'GET', 'HEAD', 'PATCH']],
    ['POST', '/healthz', ['GET', 'HEAD']],
    ['DELETE', '/', ['GET', 'HEAD']],
    ['PUT', '/r/abcdefgh', ['GET', 'HEAD']],
    ['POST', '/r/abcdefgh', ['GET', 'HEAD']],
    ['GET', '/r/abcdefgh/unlock', ['POST']],
    ['OPTIONS', '/api/v1/links', ['GET', 'HEAD', 'POST']],
  ]
  for (const [method, path, allow] of cases) {
    const res = await call(srv.url, method, path)
    assertError(res, 405, 'METHOD_NOT_ALLOWED', `${method} ${path}`)
    assert.equal(names(res.headers.get('allow')), allow.map((m) => m.toLowerCase()), `${method} ${path}`)
  }
})

// RFC 9110 9.3.2 (STYLE: HEAD goes wherever GET goes): same status and headers, no body
routing('HEAD works wherever GET does, with the same status and no body', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  const cases: Array<[string, string | undefined]> = [
    ['/healthz', undefined],
    ['/', undefined],
    [`/r/${link.code}`, undefined],
    ['/api/v1/links', user.token],
    [`/api/v1/links/${link.code}`, user.token],
    ['/api/v1/users/me', user.token],
    ['/api/v1/links', undefined],
    ['/api/v1/users/me', UNKNOWN_TOKEN],
  ]
  for (const [path, token] of cases) {
    const opts = token === undefined ? {} : { token }
    const get = await call(srv.url, 'GET', path, opts)
    const head = await call(srv.url, 'HEAD', path, opts)
    assert.is(head.status, get.status, path)
    assert.ok(head.status < 400 || head.status === 401, `${path}: ${head.status}`)
    assert.is(head.text, '', path)
    assert.is(head.headers.get('content-type'), get.headers.get('content-type'), path)
    assert.is(head.headers.get('location'), get.headers.get('location'), path)
    assert.ok(GENERATED_ID.test(head.headers.get('x-request-id') ?? ''), path)
  }
})

// contract §8: GET /healthz → 200 {"status":"ok"} while the database answers
routing('GET /healthz answers 200 {"status":"ok"}', async ({ srv }) => {
  const res = await call(srv.url, 'GET', '/healthz')
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), JSON_TYPE)
  assert.is(JSON.parse(res.text).status, 'ok')
})

routing.run()

// =============================================================================================
const ids = serverSuite('kernel: X-Request-Id', { APP_URL: 'https://app.example.org' })

// spec §7, contract §1: every response, errors, redirects and preflights included, carries X-Request-Id;
// a supplied value of 1 to 200 visible ASCII characters is reused
ids('a supplied X-Request-Id is echoed on successes, errors, redirects and preflights', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  const requests: Array<[string, string, Record<string, unknown>, number]> = [
    ['GET', '/healthz', {}, 200],
    ['GET', '/api/v1/users/me', { token: user.token }, 200],
    ['POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/id' } }, 201],
    ['GET', '/', {}, 301],
    ['GET', `/r/${link.code}`, {}, 302],
    ['HEAD', `/r/${link.code}`, {}, 302],
    ['DELETE', `/api/v1/links/${link.code}`, { token: user.token }, 204],
    ['GET', '/api/v1/login', {}, 404],
    ['GET', '/r/ZZZZZZZZ', {}, 404],
    ['DELETE', '/api/v1/auth/login', {}, 405],
    ['GET', '/api/v1/links', {}, 401],
    ['POST', '/api/v1/auth/login', { body: { username: 'nobody-here', password: 'whatever1' } }, 401],
    ['POST', '/api/v1/links', { token: user.token, body: 'x', headers: { 'content-type': 'text/plain' } }, 415],
    ['POST', '/api/v1/links', { token: user.token, body: '{' }, 422],
    ['POST', '/api/v1/links', { token: user.token, body: {} }, 422],
  ]
  let n = 0
  for (const [method, path, opts, status] of requests) {
    const id = `kernel-${n++}-${method}.${status}`
    const res = await call(srv.url, method, path, { ...opts, headers: { ...(opts.headers as Record<string, string> | undefined), 'x-request-id': id } })
    assert.is(res.status, status, `${method} ${path}: ${res.text}`)
    assert.is(res.headers.get('x-request-id'), id, `${method} ${path}`)
  }
  const preflight = await call(srv.url, 'OPTIONS', '/api/v1/links', {
    headers: { origin: 'https://a.example', 'access-control-request-method': 'POST', 'x-request-id': 'pre-flight' },
  })
  assert.is(preflight.status, 204)
  assert.is(preflight.headers.get('x-request-id'), 'pre-flight')
})

// contract §1: reused when 1 to 200 visible ASCII characters (0x21 to 0x7E)
ids('a supplied id of 1 character, of 200 characters, and of every visible ASCII character is echoed', async ({ srv }) => {
  const every = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('')
  for (const id of ['a', 'x'.repeat(200), every, 'Z'.repeat(199) + '~']) {
    const res = await call(srv.url, 'GET', '/healthz', { headers: { 'x-request-id': id } })
    assert.is(res.status, 200)
    assert.is(res.headers.get('x-request-id'), id)
  }
})

// contract §1: otherwise (or when absent) the service generates 32 lowercase hex characters
ids('an id of 201 characters, with a space, or empty is replaced by a fresh 32-hex id', async ({ srv }) => {
  for (const id of ['x'.repeat(201), 'has space', 'a\tb', '']) {
    const res = await call(srv.url, 'GET', '/healthz', { headers: { 'x-request-id': id } })
    assert.is(res.status, 200)
    const got = res.headers.get('x-request-id') ?? ''
    assert.ok(GENERATED_ID.test(got), `${JSON.stringify(id)} → ${got}`)
  }
})

// contract §1: a non-ASCII value is not reused
ids('a non-ASCII id is replaced by a fresh 32-hex id', async ({ srv }) => {
  const res = await raw(srv.url, [
    Buffer.concat([
      Buffer.from('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Request-Id: caf'),
      Buffer.from('\u00e9-\u{1F600}', 'utf8'),
      Buffer.from('\r\n\r\n'),
    ]),
  ])
  assert.is(res.status, 200)
  assert.ok(GENERATED_ID.test(header(res.head, 'x-request-id') ?? ''), res.head)
})

// contract §1: generated from 16 random bytes, so ids differ between requests
ids('generated ids are 32 lowercase hex characters and differ between requests', async ({ srv }) => {
  const seen = new Set<string>()
  for (const path of ['/healthz', '/healthz', '/api/v1/login', '/api/v1/login', '/', '/']) {
    const res = await call(srv.url, 'GET', path)
    const id = res.headers.get('x-request-id') ?? ''
    assert.ok(GENERATED_ID.test(id), `${path}: ${id}`)
    seen.add(id)
  }
  assert.is(seen.size, 6)
})

ids.run()

// =============================================================================================
const bodies = serverSuite('kernel: error shape, media type, JSON body')

const GOOD_LINK = JSON.stringify({ url: 'https://example.com/media' })

// contract §2: 415 for a JSON-taking endpoint without application/json, or with a charset other than utf-8
bodies('a missing or non-JSON Content-Type, or a non-utf-8 charset, answers 415 UNSUPPORTED_MEDIA_TYPE', async ({ srv }) => {
  const user = await newUser(srv.url)
  const auth = { authorization: `Bearer ${user.token}` }
  assertError(await postBytes(srv.url, '/api/v1/links', GOOD_LINK, auth), 415, 'UNSUPPORTED_MEDIA_TYPE', 'missing')
  for (const type of [
    'text/plain',
    'text/plain; charset=utf-8',
    'application/jsonx',
    'application/x-www-form-urlencoded',
    'application/json; charset=latin1',
    'application/json; charset=iso-8859-1',
    'application/json; charset=utf8', // not a registered name of UTF-8
  ]) {
    assertError(await postBytes(srv.url, '/api/v1/links', GOOD_LINK, { ...auth, 'content-type': type }), 415, 'UNSUPPORTED_MEDIA_TYPE', type)
  }
  // login and registration take JSON too
  assertError(await postBytes(srv.url, '/api/v1/auth/login', '{"username":"ab","password":"12345678"}', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE', 'login')
  assertError(await postBytes(srv.url, '/api/v1/users', '{}', {}), 415, 'UNSUPPORTED_MEDIA_TYPE', 'register')
  const list = await call(srv.url, 'GET', '/api/v1/links', { token: user.token })
  assert.is(list.body.links.length, 0, 'nothing was created')
})

// RFC 9110 8.4 (contract §2, 415 for an unsupported body): a content coding we cannot decode
bodies('a compressed body (Content-Encoding other than identity, or a transfer coding besides chunked) answers 415 UNSUPPORTED_MEDIA_TYPE', async ({ srv }) => {
  const user = await newUser(srv.url)
  const headers = { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' }
  for (const coding of ['gzip', 'br', 'deflate', 'x-custom']) {
    assertError(await postBytes(srv.url, '/api/v1/links', GOOD_LINK, { ...headers, 'content-encoding': coding }), 415, 'UNSUPPORTED_MEDIA_TYPE', coding)
  }
  const plain = await postBytes(srv.url, '/api/v1/links', GOOD_LINK, { ...headers, 'content-encoding': 'Identity' })
  assert.is(plain.status, 201, plain.text)
  // a transfer coding besides chunked: Node removes the chunking, not the gzip
  const chunkedGzip = await raw(srv.url, [
    `POST /api/v1/links HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.token}\r\nContent-Type: application/json\r\n` +
      `Transfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
  ])
  assert.is(chunkedGzip.status, 415, chunkedGzip.head)
  assert.is(JSON.parse(chunkedGzip.body).code, 'UNSUPPORTED_MEDIA_TYPE')
})

// contract §2: parameters allowed; utf-8 in any case; the media type is case-insensitive
bodies('application/json; charset=UTF-8 and application/JSON are accepted', async ({ srv }) => {
  const user = await newUser(srv.url)
  for (const type of ['application/json; charset=UTF-8', 'application/JSON', 'application/json;charset=utf-8']) {
    const res = await postBytes(srv.url, '/api/v1/links', JSON.stringify({ url: `https://example.com/${encodeURIComponent(type)}` }), {
      authorization: `Bearer ${user.token}`,
      'content-type': type,
    })
    assert.is(res.status, 201, `${type}: ${res.text}`)
    assert.is(res.body.url, `https://example.com/${encodeURIComponent(type)}`)
  }
})

// contract §2: 422 INVALID_FORM_BODY when the body is not UTF-8, not JSON, or not a JSON object;
// `errors` only on field validation failures
bodies('a body that is not UTF-8, not JSON or not a JSON object answers 422 INVALID_FORM_BODY without errors', async ({ srv }) => {
  const user = await newUser(srv.url)
  const headers = { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' }
  const cases: Array<[string, Buffer | string]> = [
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x75, 0x72, 0x6c, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
    ['latin1 bytes', Buffer.from('{"url":"https://ex\u00e4mple.com/"}', 'latin1')],
    ['malformed JSON', '{"url": "https://example.com/"'],
    ['trailing garbage', '{"url": "https://example.com/"} x'],
    ['empty body', ''],
    ['array', '[{"url":"https://example.com/"}]'],
    ['null', 'null'],
    ['string', '"https://example.com/"'],
    ['number', '42'],
    ['boolean', 'true'],
  ]
  for (const [name, body] of cases) {
    assertError(await postBytes(srv.url, '/api/v1/links', body, headers), 422, 'INVALID_FORM_BODY', name)
  }
  assertError(await postBytes(srv.url, '/api/v1/auth/login', '[]', { 'content-type': 'application/json' }), 422, 'INVALID_FORM_BODY', 'login array')
  const list = await call(srv.url, 'GET', '/api/v1/links', { token: user.token })
  assert.is(list.body.links.length, 0, 'nothing was created')
})

// contract §2: `errors` is present on field validation failures, each {field, code, message}
bodies('a field validation failure carries errors with field, code and message', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: {} })
  assert.is(res.status, 422)
  assert.is(res.headers.get('content-type'), JSON_TYPE)
  assert.equal(Object.keys(res.body).sort(), ['code', 'errors', 'message'])
  assert.is(res.body.code, 'INVALID_FORM_BODY')
  assert.type(res.body.message, 'string')
  assert.ok(Array.isArray(res.body.errors) && res.body.errors.length === 1, res.text)
  assert.equal(Object.keys(res.body.errors[0]).sort(), ['code', 'field', 'message'])
  assert.is(res.body.errors[0].field, 'url')
  assert.is(res.body.errors[0].code, 'REQUIRED')
})

// contract §2: every error is JSON {code, message}; 401 UNAUTHORIZED carries WWW-Authenticate: Bearer
bodies('errors from every layer share the {code, message} shape and the JSON content type', async ({ srv }) => {
  assertError(await call(srv.url, 'GET', '/nope'), 404, 'ROUTE_NOT_FOUND')
  assertError(await call(srv.url, 'PATCH', '/api/v1/links'), 405, 'METHOD_NOT_ALLOWED')
  const unauth = await call(srv.url, 'GET', '/api/v1/links', { token: UNKNOWN_TOKEN })
  assertError(unauth, 401, 'UNAUTHORIZED')
  assert.is(unauth.headers.get('www-authenticate'), 'Bearer')
  assertError(await call(srv.url, 'GET', '/r/ZZZZZZZZ'), 404, 'LINK_NOT_FOUND')
})

bodies.run()

// =============================================================================================
const order = serverSuite('kernel: order of checks')

// contract §2: route (404) → method (405): an unknown path with a wrong method is 404, not 405
order('an unknown path with any method is 404, not 405', async ({ srv }) => {
  for (const [method, path] of [['PUT', '/api/v1/login'], ['DELETE', '/api/v1/users/'], ['PATCH', '/r/'], ['DELETE', '/API/v1/links']] as const) {
    assertError(await call(srv.url, method, path), 404, 'ROUTE_NOT_FOUND', `${method} ${path}`)
  }
})

// contract §2: CORS preflight (204, on any path) comes first
order('a preflight on an unknown path is 204, not 404', async ({ srv }) => {
  for (const path of ['/api/v1/login', '/nothing', '/api/v1/users/']) {
    const res = await call(srv.url, 'OPTIONS', path, { headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } })
    assert.is(res.status, 204, path)
    assert.is(res.text, '', path)
  }
})

// contract §2: method (405) → ... → bearer auth (401)
order('a wrong method on a protected path is 405 without auth, not 401', async ({ srv }) => {
  const res = await call(srv.url, 'PUT', '/api/v1/links')
  assertError(res, 405, 'METHOD_NOT_ALLOWED')
  assert.is(res.headers.get('www-authenticate'), null)
})

// contract §2: bearer auth (401) → media type (415)
order('bad or missing auth with a wrong media type is 401, not 415', async ({ srv }) => {
  const missing = await postBytes(srv.url, '/api/v1/links', 'x', { 'content-type': 'text/plain' })
  assertError(missing, 401, 'UNAUTHORIZED', 'missing token')
  assert.is(missing.headers.get('www-authenticate'), 'Bearer')
  assertError(await postBytes(srv.url, '/api/v1/links', 'x', { authorization: `Bearer ${UNKNOWN_TOKEN}`, 'content-type': 'text/plain' }), 401, 'UNAUTHORIZED', 'unknown token')
  assertError(await postBytes(srv.url, '/api/v1/links', 'x', { authorization: 'Bearer', 'content-type': 'text/plain' }), 401, 'UNAUTHORIZED', 'malformed header')
  assertError(await postBytes(srv.url, '/api/v1/links', '{', { authorization: `Bearer ${UNKNOWN_TOKEN}`, 'content-type': 'application/json' }), 401, 'UNAUTHORIZED', 'bad JSON')
})

// contract §2: media type (415) → ... → JSON (422)
order('good auth with a wrong media type and invalid JSON is 415, not 422', async ({ srv }) => {
  const user = await newUser(srv.url)
  assertError(await postBytes(srv.url, '/api/v1/links', '{not json', { authorization: `Bearer ${user.token}`, 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE')
  assertError(await postBytes(srv.url, '/api/v1/links', '{not json', { authorization: `Bearer ${user.token}` }), 415, 'UNSUPPORTED_MEDIA_TYPE')
  assertError(await postBytes(srv.url, '/api/v1/links', '{not json', { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' }), 422, 'INVALID_FORM_BODY')
})

// contract §2: rate limit (429, its two routes only) comes before the media type (415)
order('on login the rate limit is taken before the media type is checked', async ({ srv }) => {
  const ip = randomIp()
  const first = await postBytes(srv.url, '/api/v1/auth/login', 'x', { 'x-forwarded-for': ip, 'content-type': 'text/plain' })
  assertError(first, 415, 'UNSUPPORTED_MEDIA_TYPE')
  assert.is(first.headers.get('x-ratelimit-limit'), '5')
  assert.is(first.headers.get('x-ratelimit-remaining'), '4')
  // nine more at once: the bucket (capacity 5) has at most 4 + a little refill left
  const rest = await Promise.all(
    Array.from({ length: 9 }, () => postBytes(srv.url, '/api/v1/auth/login', 'x', { 'x-forwarded-for': ip, 'content-type': 'text/plain' })),
  )
  const limited = rest.filter((r) => r.status === 429)
  assert.ok(limited.length >= 3, rest.map((r) => r.status).join(','))
  for (const r of limited) {
    assertError(r, 429, 'RATE_LIMIT_EXCEEDED')
    assert.ok(/^[1-9]\d*$/.test(r.headers.get('retry-after') ?? ''), r.headers.get('retry-after') ?? 'none')
  }
  for (const r of rest) assert.ok(r.status === 415 || r.status === 429, String(r.status))
})

order.run()

// =============================================================================================
const cors = serverSuite('kernel: CORS')

const EXPOSED = ['location', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-request-id']

function assertCors(res: Res, what: string): void {
  assert.is(res.headers.get('access-control-allow-origin'), '*', what)
  const exposed = names(res.headers.get('access-control-expose-headers'))
  for (const name of EXPOSED) assert.ok(exposed.includes(name), `${what}: ${name} not in ${exposed.join(',')}`)
  assert.is(res.headers.get('access-control-allow-credentials'), null, what)
}

// contract §6: a request with Origin gets Allow-Origin: * and Expose-Headers naming the five headers
cors('a request with Origin gets Allow-Origin * and the exposed headers, on successes and errors', async ({ srv }) => {
  const user = await newUser(srv.url)
  const origin = { origin: 'https://app.example.org' }
  const cases: Array<[string, string, Record<string, unknown>, number]> = [
    ['GET', '/healthz', {}, 200],
    ['GET', '/api/v1/users/me', { token: user.token }, 200],
    ['POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/cors' } }, 201],
    ['GET', '/', {}, 301],
    ['GET', '/api/v1/login', {}, 404],
    ['PUT', '/api/v1/links', {}, 405],
    ['GET', '/api/v1/links', {}, 401],
    ['POST', '/api/v1/auth/login', { body: { username: 'nobody-here', password: 'whatever1' } }, 401],
    ['POST', '/api/v1/links', { token: user.token, body: '[]' }, 422],
  ]
  for (const [method, path, opts, status] of cases) {
    const res = await call(srv.url, method, path, { ...opts, headers: origin })
    assert.is(res.status, status, `${method} ${path}: ${res.text}`)
    assertCors(res, `${method} ${path}`)
  }
})

// contract §6: never Access-Control-Allow-Credentials (spec §5: credentialed CORS is disabled)
cors('credentials-looking requests still get Allow-Origin * and never Allow-Credentials', async ({ srv }) => {
  const user = await newUser(srv.url)
  const headers = { origin: 'https://evil.example', cookie: 'session=abc', 'sec-fetch-mode': 'cors' }
  const actual = await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token, headers })
  assert.is(actual.status, 200)
  assertCors(actual, 'actual')
  const preflight = await call(srv.url, 'OPTIONS', '/api/v1/users/me', {
    headers: { ...headers, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, content-type' },
  })
  assert.is(preflight.status, 204)
  assert.is(preflight.headers.get('access-control-allow-origin'), '*')
  assert.is(preflight.headers.get('access-control-allow-credentials'), null)
  const nullOrigin = await call(srv.url, 'GET', '/healthz', { headers: { origin: 'null' } })
  assertCors(nullOrigin, 'Origin: null')
})

// contract §6: a preflight on any path → 204 with methods, Allow-Headers naming Authorization,
// Content-Type and X-Request-Id, and Max-Age; contract §1: 204 has no body
cors('a preflight on any path answers 204 with methods, the three headers by name and Max-Age', async ({ srv }) => {
  for (const path of ['/api/v1/links', '/api/v1/links/abcdefgh', '/api/v1/auth/login', '/api/v1/users/me', '/r/abcdefgh', '/', '/nothing', '/api/v1/users/']) {
    const res = await call(srv.url, 'OPTIONS', path, {
      headers: { origin: 'https://app.example.org', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization,content-type,x-request-id' },
    })
    assert.is(res.status, 204, path)
    assert.is(res.text, '', path)
    assert.is(res.headers.get('access-control-allow-origin'), '*', path)
    const methods = names(res.headers.get('access-control-allow-methods'))
    for (const m of ['delete', 'get', 'patch', 'post']) assert.ok(methods.includes(m), `${path}: ${m}`)
    const allowed = names(res.headers.get('access-control-allow-headers'))
    for (const h of ['authorization', 'content-type', 'x-request-id']) assert.ok(allowed.includes(h), `${path}: ${h}`)
    assert.ok(/^[1-9]\d*$/.test(res.headers.get('access-control-max-age') ?? ''), `${path}: max-age`)
    assert.is(res.headers.get('access-control-allow-credentials'), null, path)
    assert.ok(GENERATED_ID.test(res.headers.get('x-request-id') ?? ''), path)
  }
})

// contract §6: preflights take no rate-limit token; spec §8: burst 5
cors('preflights on /api/v1/auth/login take no rate-limit token', async ({ srv }) => {
  const ip = randomIp()
  for (let i = 0; i < 6; i++) {
    const pre = await call(srv.url, 'OPTIONS', '/api/v1/auth/login', {
      ip,
      headers: { origin: 'https://app.example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    })
    assert.is(pre.status, 204)
  }
  const res = await call(srv.url, 'POST', '/api/v1/auth/login', { ip, body: { username: 'nobody-here', password: 'whatever1' } })
  assertError(res, 401, 'INVALID_CREDENTIALS')
  assert.is(res.headers.get('x-ratelimit-limit'), '5')
  assert.is(res.headers.get('x-ratelimit-remaining'), '4')
})

cors.run()
