// Browser-facing routes (spec §4, contract §5).
import * as assert from 'uvu/assert'
import { assertError, call, newLink, newUser, type User } from '../helpers/api.js'
import { header, raw } from '../helpers/raw.js'
import { feedSettled, serverSuite } from '../helpers/server.js'

const test = serverSuite<{ user: User }>('redirects', { APP_URL: 'https://app.example.org/' })

// runs after serverSuite's own `before` (uvu keeps the order), so ctx.srv is up
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

// contract §5: GET|HEAD /r/{code} → 302 with Location = the stored url and Cache-Control: no-store
test('GET /r/{code} answers 302 to the stored url with Cache-Control: no-store', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token, 'https://example.com/a?b=c#d')
  const res = await call(srv.url, 'GET', `/r/${link.code}`)
  assert.is(res.status, 302)
  assert.is(res.headers.get('location'), 'https://example.com/a?b=c#d')
  assert.is(res.headers.get('cache-control'), 'no-store')
  assert.ok(res.headers.get('x-request-id'))
})

// The redirect path answers from its cache without the general pipeline; the answer must be the
// same, byte for byte, as the one read from the database (contract §5, §2 error shape).
test('answers from the cache are the same as answers from the database, for 302 and 404', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token, 'https://example.com/cached')
  await feedSettled(srv) // else the create's own notification may evict what the first GET cached
  const shape = (r: Awaited<ReturnType<typeof call>>) => {
    const headers = [...r.headers.entries()].filter(([k]) => !['date', 'x-request-id', 'keep-alive', 'connection'].includes(k))
    return { status: r.status, headers, text: r.text }
  }
  for (const path of [`/r/${link.code}`, '/r/Unkn0wnX']) {
    srv.service.deps.cache.clear()
    const fromDb = await call(srv.url, 'GET', path, { headers: { 'x-request-id': 'first' } })
    const fromCache = await call(srv.url, 'GET', path, { headers: { 'x-request-id': 'second' } })
    assert.ok(srv.service.deps.cache.size > 0, 'the second answer came from the cache')
    assert.equal(shape(fromCache), shape(fromDb), path)
    assert.is(fromDb.headers.get('x-request-id'), 'first')
    assert.is(fromCache.headers.get('x-request-id'), 'second')
  }
})

// Issue 13: the cached path reads raw headers itself; a repeated header it reads (Node would join
// or drop the repeats) leaves the answer to the general path, which must give the same one.
test('repeated X-Request-Id or User-Agent on a cached code: the same 302, the id as the general path decides', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token, 'https://example.com/repeated')
  await feedSettled(srv)
  await call(srv.url, 'GET', `/r/${link.code}`) // now cached
  const get = (extra: string) => raw(srv.url, [`GET /r/${link.code} HTTP/1.1\r\nHost: x\r\n${extra}Connection: close\r\n\r\n`])
  const single = await get('X-Request-Id: abc\r\n')
  assert.is(single.status, 302)
  assert.is(header(single.head, 'x-request-id'), 'abc')
  const twice = await get('X-Request-Id: abc\r\nx-request-id: def\r\n')
  assert.is(twice.status, 302)
  assert.is(header(twice.head, 'location'), 'https://example.com/repeated')
  assert.match(header(twice.head, 'x-request-id') ?? '', /^[0-9a-f]{32}$/, 'Node joins them as "abc, def", not a valid id: a fresh one')
  const agents = await get('User-Agent: a\r\nUser-Agent: b\r\n')
  assert.is(agents.status, 302)
  assert.is(header(agents.head, 'location'), 'https://example.com/repeated')
  const lower = await get('x-REQUEST-id: MiXeD\r\n')
  assert.is(header(lower.head, 'x-request-id'), 'MiXeD', 'header names in any case')
})

// contract §6: a request with Origin gets the CORS headers, on the redirect path too
test('a redirect requested with Origin carries the CORS headers, cached or not', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  for (let i = 0; i < 2; i++) {
    const res = await call(srv.url, 'GET', `/r/${link.code}`, { headers: { origin: 'https://a.example' } })
    assert.is(res.status, 302)
    assert.is(res.headers.get('access-control-allow-origin'), '*')
  }
})

test('HEAD /r/{code} answers 302 with the same Location and no body', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token, 'https://example.com/head')
  const res = await call(srv.url, 'HEAD', `/r/${link.code}`)
  assert.is(res.status, 302)
  assert.is(res.headers.get('location'), 'https://example.com/head')
  assert.is(res.text, '')
})

// contract §5: non-ASCII characters percent-encoded as UTF-8, every ASCII character unchanged
test('Location percent-encodes non-ASCII as UTF-8 and leaves ASCII unchanged', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token, "https://exämple.com/ü/😀?q=a%20b&r='x'")
  assert.is(link.url, "https://exämple.com/ü/😀?q=a%20b&r='x'")
  const res = await call(srv.url, 'GET', `/r/${link.code}`)
  assert.is(res.headers.get('location'), "https://ex%C3%A4mple.com/%C3%BC/%F0%9F%98%80?q=a%20b&r='x'")
})

// contract §5: codes are case-sensitive; unknown code → 404 LINK_NOT_FOUND
test('codes are case-sensitive and an unknown code answers 404 LINK_NOT_FOUND', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const flipped = link.code.replace(/[a-zA-Z]/, (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()))
  if (flipped !== link.code) {
    const res = await call(srv.url, 'GET', `/r/${flipped}`)
    assert.is(res.status, 404)
    assert.is(res.body.code, 'LINK_NOT_FOUND')
  }
  const unknown = await call(srv.url, 'GET', '/r/ZZZZZZZZ')
  assert.is(unknown.status, 404)
  assert.is(unknown.body.code, 'LINK_NOT_FOUND')
})

test('a malformed code answers 404 LINK_NOT_FOUND; /r/ itself is ROUTE_NOT_FOUND', async ({ srv }) => {
  for (const code of ['short', 'toolong123', 'abc-defg', '%41bcdefg']) {
    const res = await call(srv.url, 'GET', `/r/${code}`)
    assert.is(res.status, 404, code)
    assert.is(res.body.code, 'LINK_NOT_FOUND', code)
  }
  const bare = await call(srv.url, 'GET', '/r/')
  assert.is(bare.status, 404)
  assert.is(bare.body.code, 'ROUTE_NOT_FOUND')
})

// spec §4: GET, HEAD / → 301 redirect to {app_url}/ (no doubled slash)
test('GET and HEAD / answer 301 to {APP_URL}/ without a doubled slash', async ({ srv }) => {
  for (const method of ['GET', 'HEAD']) {
    const res = await call(srv.url, method, '/')
    assert.is(res.status, 301)
    assert.is(res.headers.get('location'), 'https://app.example.org/')
  }
})

// contract §5: /r/{code} is GET and HEAD only; any other method is 405 with Allow: GET, HEAD, before
// anything else is checked (contract §2: method before media type and body)
test('POST /r/{code} of an ordinary link, with any body or none, is 405 with Allow: GET, HEAD; so are PUT and DELETE', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  for (const [method, opts] of [
    ['POST', {}],
    ['POST', { body: { password: 'x' } }],
    ['POST', { body: 'password=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
    ['POST', { body: 'x', headers: { 'content-type': 'text/plain' } }],
    ['PUT', {}],
    ['DELETE', {}],
  ] as const) {
    const res = await call(srv.url, method, `/r/${link.code}`, opts)
    assertError(res, 405, 'METHOD_NOT_ALLOWED', `${method} ${JSON.stringify(opts)}`)
    assert.is(res.headers.get('allow'), 'GET, HEAD')
  }
})

// contract §4: visits counts GET redirects served (a HEAD is not a visit)
test('visits count GET redirects, not HEADs, after the flush', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  for (let i = 0; i < 3; i++) await call(srv.url, 'GET', `/r/${link.code}`)
  await call(srv.url, 'HEAD', `/r/${link.code}`)
  await srv.service.deps.visits.flush()
  const res = await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })
  assert.is(res.body.visits, 3)
  assert.type(res.body.last_visited_at, 'string')
})

test.run()
