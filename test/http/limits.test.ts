// Request limits over raw sockets (spec §7, §8; contract §2, §8): the 65,536-byte body limit,
// declared and streamed; lying Content-Length; oversized headers (431); malformed HTTP (400);
// server timeouts; and no 5xx for hostile input.
import { connect, type Socket } from 'node:net'
import * as assert from 'uvu/assert'
import { assertError, call, newUser, randomIp } from '../helpers/api.js'
import { header, raw, requestHead, streamChunked } from '../helpers/raw.js'
import { serverSuite } from '../helpers/server.js'
import { sleep } from '../helpers/wait.js'

const MAX = 65_536
const GENERATED_ID = /^[0-9a-f]{32}$/
const JSON_TYPE = 'application/json; charset=utf-8'


const request = (requestLine: string, headers: string[]): string => requestHead([requestLine, 'Host: localhost', ...headers])

/** A JSON text of exactly `bytes` UTF-8 bytes: a link body padded with an ignored field. */
function jsonOfSize(bytes: number, url = 'https://example.com/exact'): string {
  const start = `{"url":${JSON.stringify(url)},"pad":"`
  const end = '"}'
  return start + 'x'.repeat(bytes - start.length - end.length) + end
}

/** How the tests stream a body: 8 KiB chunks, 30 ms apart, up to 512 KiB in all. */
const STREAM = { chunkBytes: 8192, maxChunks: 64, pauseMs: 30 }

/**
 * An authorised request with a body over the limit answers 413 both when it declares its length and
 * when it streams the body chunked: the streamed one as soon as the limit is crossed.
 */
async function assertOversizedRefused(base: string, requestLine: string, token: string): Promise<void> {
  const declared = await raw(base, [request(requestLine, [`Authorization: Bearer ${token}`, 'Content-Length: 65537'])], { idleMs: 5000 })
  assertError(declared, 413, 'REQUEST_BODY_TOO_LARGE', 'declared')
  const streamed = await streamChunked(base, request(requestLine, [`Authorization: Bearer ${token}`, 'Transfer-Encoding: chunked']), STREAM)
  assertError(streamed, 413, 'REQUEST_BODY_TOO_LARGE', 'streamed')
  assert.ok(streamed.sentAtAnswer > MAX && streamed.sentAtAnswer <= MAX + 3 * 8192, String(streamed.sentAtAnswer))
}

// =============================================================================================
const body = serverSuite('limits: request body')

// spec §7: 413 for a body over 65,536 bytes, returned before the endpoint processes it;
// contract §2: declared Content-Length over the limit → 413 before reading; STYLE: 413 with Connection: close
body('a declared Content-Length of 65,537 answers 413 before any body byte is sent, and closes', async ({ srv }) => {
  const user = await newUser(srv.url)
  const started = performance.now()
  const res = await raw(
    srv.url,
    [
      request('POST /api/v1/links HTTP/1.1', [
        `Authorization: Bearer ${user.token}`,
        'Content-Type: application/json',
        'Content-Length: 65537',
        'X-Request-Id: declared-413',
      ]),
    ],
    { idleMs: 5000 },
  )
  assertError(res, 413, 'REQUEST_BODY_TOO_LARGE')
  assert.is(header(res.head, 'connection')?.toLowerCase(), 'close')
  assert.is(header(res.head, 'x-request-id'), 'declared-413')
  assert.ok(res.closed, 'the server closes the connection')
  assert.ok(performance.now() - started < 4000, 'answered without waiting for the body')
})

// contract §2 order: declared Content-Length (413) comes before bearer auth (401)
body('with no auth, an oversized declared length is 413, not 401', async ({ srv }) => {
  const res = await raw(srv.url, [request('POST /api/v1/links HTTP/1.1', ['Content-Type: text/plain', 'Content-Length: 1000000'])], { idleMs: 5000 })
  assertError(res, 413, 'REQUEST_BODY_TOO_LARGE')
  assert.is(header(res.head, 'www-authenticate'), undefined)
  assert.ok(GENERATED_ID.test(header(res.head, 'x-request-id') ?? ''))
})

// contract §2 order: route (404) → method (405) → rate limit (429) → declared Content-Length (413)
body('route, method and rate limit are decided before an oversized declared length', async ({ srv }) => {
  const big = 'Content-Length: 70000'
  const unknown = await raw(srv.url, [request('POST /api/v1/login HTTP/1.1', ['Content-Type: application/json', big])], { idleMs: 500 })
  assertError(unknown, 404, 'ROUTE_NOT_FOUND')
  const method = await raw(srv.url, [request('PUT /api/v1/links HTTP/1.1', ['Content-Type: application/json', big])], { idleMs: 500 })
  assertError(method, 405, 'METHOD_NOT_ALLOWED')
  const ip = randomIp()
  const limited = await raw(srv.url, [request('POST /api/v1/users HTTP/1.1', [`X-Forwarded-For: ${ip}`, 'Content-Type: application/json', big])], { idleMs: 5000 })
  assertError(limited, 413, 'REQUEST_BODY_TOO_LARGE')
  assert.is(header(limited.head, 'x-ratelimit-limit'), '5', 'the rate limit was consulted first')
  assert.is(header(limited.head, 'x-ratelimit-remaining'), '4', 'and took a token')
})

// spec §7: 413 "returned before the endpoint processes it"; RFC 9110 10.1.1: a server that refuses
// the body answers with the final status instead of 100 Continue
body('with Expect: 100-continue, an oversized declared length gets 413 and no 100 Continue', async ({ srv }) => {
  const user = await newUser(srv.url)
  const big = await raw(
    srv.url,
    [request('POST /api/v1/links HTTP/1.1', [`Authorization: Bearer ${user.token}`, 'Content-Type: application/json', 'Content-Length: 65537', 'Expect: 100-continue'])],
    { idleMs: 5000 },
  )
  assertError(big, 413, 'REQUEST_BODY_TOO_LARGE')
  assert.not.ok(big.head.includes('100 Continue'), big.head)
  const text = JSON.stringify({ url: 'https://example.com/continue' })
  const small = await raw(
    srv.url,
    [
      request('POST /api/v1/links HTTP/1.1', [`Authorization: Bearer ${user.token}`, 'Content-Type: application/json', `Content-Length: ${text.length}`, 'Expect: 100-continue', 'Connection: close']),
      text,
    ],
    { pauseMs: 300, idleMs: 5000 },
  )
  assert.ok(small.head.startsWith('HTTP/1.1 100 Continue'), small.head)
  assert.ok(small.body.startsWith('HTTP/1.1 201 '), small.body)
})

// spec §8: request body (global) 65,536 bytes — exactly the limit is allowed
body('a body of exactly 65,536 bytes of valid JSON is accepted', async ({ srv }) => {
  const user = await newUser(srv.url)
  const text = jsonOfSize(MAX)
  assert.is(Buffer.byteLength(text), MAX)
  const res = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: text })
  assert.is(res.status, 201, res.text)
  assert.is(res.body.url, 'https://example.com/exact')
})

// spec §8: request body limit 65,536 bytes — the streamed byte counter allows exactly the limit
body('a chunked body of exactly 65,536 bytes is accepted', async ({ srv }) => {
  const user = await newUser(srv.url)
  const data = Buffer.from(jsonOfSize(MAX, 'https://example.com/chunked'))
  const exact = await raw(srv.url, [
    request('POST /api/v1/links HTTP/1.1', [`Authorization: Bearer ${user.token}`, 'Content-Type: application/json', 'Transfer-Encoding: chunked', 'Connection: close']),
    Buffer.concat([Buffer.from(`${(MAX / 2).toString(16)}\r\n`), data.subarray(0, MAX / 2), Buffer.from('\r\n')]),
    Buffer.concat([Buffer.from(`${(MAX / 2).toString(16)}\r\n`), data.subarray(MAX / 2), Buffer.from('\r\n0\r\n\r\n')]),
  ], { pauseMs: 20, idleMs: 5000 })
  assert.is(exact.status, 201, exact.head + exact.body)
  assert.is(JSON.parse(exact.body).url, 'https://example.com/chunked')
})

// contract §2: body read with a byte counter (413 as soon as byte 65,537 arrives), "declared or streamed"
body('a chunked body answers 413 as soon as byte 65,537 arrives, not at its end', async ({ srv }) => {
  const user = await newUser(srv.url)
  const res = await streamChunked(
    srv.url,
    request('POST /api/v1/links HTTP/1.1', [
      `Authorization: Bearer ${user.token}`,
      'Content-Type: application/json',
      'Transfer-Encoding: chunked',
      'X-Request-Id: streamed-413',
    ]),
    STREAM,
  )
  assertError(res, 413, 'REQUEST_BODY_TOO_LARGE')
  assert.is(header(res.head, 'x-request-id'), 'streamed-413')
  assert.is(header(res.head, 'connection')?.toLowerCase(), 'close')
  assert.ok(res.sentAtAnswer > MAX, `answered after ${res.sentAtAnswer} bytes: before the limit was crossed`)
  assert.ok(res.sentAtAnswer <= MAX + 3 * 8192, `answered only after ${res.sentAtAnswer} bytes`)
  assert.ok(res.closed, 'the server closes the connection')
  const list = await call(srv.url, 'GET', '/api/v1/links', { token: user.token })
  assert.not.ok(list.body.links.some((l: { url: string }) => l.url.startsWith('https://example.com/x')), 'nothing was created')
})

// contract §2: 413 "on every route"; §3: logout ignores any body, but the size limit still holds;
// spec §7: returned before the endpoint processes it
body('an oversized body on logout answers 413 and does not log out', async ({ srv }) => {
  const user = await newUser(srv.url)
  await assertOversizedRefused(srv.url, 'POST /api/v1/auth/logout HTTP/1.1', user.token)
  const me = await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })
  assert.is(me.status, 200, 'the session survived both refused logouts')
  // a small body on logout is ignored (contract §3)
  const ok = await call(srv.url, 'POST', '/api/v1/auth/logout', { token: user.token, body: { anything: 1 } })
  assert.is(ok.status, 204, ok.text)
})

// contract §2: 413 on every route, also GET /api/v1/links which takes no body
body('an oversized body on GET /api/v1/links answers 413, declared or streamed', async ({ srv }) => {
  const user = await newUser(srv.url)
  await assertOversizedRefused(srv.url, 'GET /api/v1/links HTTP/1.1', user.token)
})

// contract §2 order: bearer auth (401) and media type (415) come before the body is read
body('a streamed oversized body is 401 without auth and 415 with a wrong media type, answered before the body', async ({ srv }) => {
  const user = await newUser(srv.url)
  const noAuth = await streamChunked(
    srv.url,
    request('POST /api/v1/links HTTP/1.1', ['Content-Type: application/json', 'Transfer-Encoding: chunked']),
    STREAM,
  )
  assertError(noAuth, 401, 'UNAUTHORIZED', 'no auth')
  assert.ok(noAuth.sentAtAnswer < MAX, String(noAuth.sentAtAnswer))
  const media = await streamChunked(
    srv.url,
    request('POST /api/v1/links HTTP/1.1', [`Authorization: Bearer ${user.token}`, 'Content-Type: text/plain', 'Transfer-Encoding: chunked']),
    STREAM,
  )
  assertError(media, 415, 'UNSUPPORTED_MEDIA_TYPE', 'media type')
  assert.ok(media.sentAtAnswer < MAX, String(media.sentAtAnswer))
})

// contract §8: slow or oversized clients cannot hold the server
body('a lying Content-Length (declares 10, sends 5, waits) does not hold up other clients', async ({ srv }) => {
  const user = await newUser(srv.url)
  const { hostname, port } = new URL(srv.url)
  const liars: Socket[] = []
  const answers: string[] = []
  for (const head of [
    request('POST /api/v1/auth/login HTTP/1.1', [`X-Forwarded-For: ${randomIp()}`, 'Content-Type: application/json', 'Content-Length: 10']),
    request('POST /api/v1/links HTTP/1.1', [`Authorization: Bearer ${user.token}`, 'Content-Type: application/json', 'Content-Length: 10']),
    request('POST /api/v1/auth/logout HTTP/1.1', [`Authorization: Bearer ${user.token}`, 'Content-Length: 10']),
  ]) {
    const socket = connect(Number(port), hostname)
    socket.on('error', () => {})
    socket.on('data', (c: Buffer) => answers.push(c.toString('latin1')))
    await new Promise<void>((r) => socket.once('connect', () => r()))
    socket.write(head + '{"a":')
    liars.push(socket)
  }
  try {
    await sleep(200)
    const started = performance.now()
    const health = await call(srv.url, 'GET', '/healthz')
    assert.is(health.status, 200)
    const other = await newUser(srv.url)
    const created = await call(srv.url, 'POST', '/api/v1/links', { token: other.token, body: { url: 'https://example.com/while-lying' } })
    assert.is(created.status, 201)
    assert.ok(performance.now() - started < 5000, 'other clients were served promptly')
    assert.equal(answers, [], 'the liars are still waiting for their bodies, not answered early')
    const me = await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })
    assert.is(me.status, 200, 'the half-sent logout did not log out')
  } finally {
    for (const s of liars) s.destroy()
  }
})

body.run()

// =============================================================================================
const protocol = serverSuite('limits: headers, malformed HTTP, timeouts')

// contract §8: headers over the size limit get 431; §1: every response carries X-Request-Id; §2: JSON errors
protocol('a 20 KB header answers 431 with our JSON error shape and a request id', async ({ srv }) => {
  for (const path of ['/healthz', '/api/v1/auth/login', '/api/v1/nothing']) {
    const res = await raw(srv.url, [request(`GET ${path} HTTP/1.1`, [`X-Big: ${'a'.repeat(20_000)}`, 'X-Request-Id: too-big'])], { idleMs: 3000 })
    assertError(res, 431, /^[A-Z][A-Z_]+$/, path)
    assert.ok(GENERATED_ID.test(header(res.head, 'x-request-id') ?? ''), res.head)
  }
  const many = await raw(srv.url, [request('GET /healthz HTTP/1.1', Array.from({ length: 400 }, (_, i) => `X-H${i}: ${'b'.repeat(60)}`))], { idleMs: 3000 })
  assertError(many, 431, /^[A-Z][A-Z_]+$/, 'many headers')
  const health = await call(srv.url, 'GET', '/healthz')
  assert.is(health.status, 200)
})

// contract §1: every response carries X-Request-Id; contract §2: every error is JSON {code, message}
protocol('malformed HTTP answers 400 with our JSON error shape and a request id', async ({ srv }) => {
  const cases: Array<[string, string]> = [
    ['not HTTP', 'HELLO THERE\r\n\r\n'],
    ['header line without a colon', 'GET /healthz HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n'],
    ['space before colon', 'GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n'],
    ['non-numeric Content-Length', 'POST /api/v1/users HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
    ['two different Content-Lengths', 'POST /api/v1/users HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello'],
    ['control character in the path', 'GET /heal\x01thz HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['bare CR inside a header value', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n'],
  ]
  for (const [name, text] of cases) {
    const res = await raw(srv.url, [text], { idleMs: 3000 })
    assertError(res, 400, /^[A-Z][A-Z_]+$/, name)
    assert.ok(GENERATED_ID.test(header(res.head, 'x-request-id') ?? ''), `${name}: ${res.head}`)
  }
  const health = await call(srv.url, 'GET', '/healthz')
  assert.is(health.status, 200)
})

// contract §2: no such path (any method) → 404 ROUTE_NOT_FOUND; §1: every response carries X-Request-Id.
// CONNECT's target is host:port, which is never one of our paths.
protocol('CONNECT answers 404 ROUTE_NOT_FOUND with a request id instead of hanging up', async ({ srv }) => {
  const res = await raw(srv.url, ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'], { idleMs: 1000 })
  assert.is(res.status, 404)
  assert.is(JSON.parse(res.body).code, 'ROUTE_NOT_FOUND')
  assert.match(header(res.head, 'x-request-id') ?? '', /^[0-9a-f]{32}$/)
})

// RFC 9112 3.2 and contract §1: an HTTP/1.1 request without Host is a 400, still with our shape and id
protocol('an HTTP/1.1 request without Host answers 400 BAD_REQUEST with a request id', async ({ srv }) => {
  const res = await raw(srv.url, ['GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n'], { idleMs: 1000 })
  assertError(res, 400, 'BAD_REQUEST')
  assert.match(header(res.head, 'x-request-id') ?? '', GENERATED_ID)
})

// RFC 9110 10.1.1: an expectation other than 100-continue is 417; contract §1: with X-Request-Id
protocol('Expect other than 100-continue answers 417 EXPECTATION_FAILED with a request id', async ({ srv }) => {
  const res = await raw(srv.url, [request('GET /healthz HTTP/1.1', ['Expect: teapot', 'X-Request-Id: expect-1', 'Connection: close'])], { idleMs: 1000 })
  assertError(res, 417, 'EXPECTATION_FAILED')
  assert.is(header(res.head, 'x-request-id'), 'expect-1')
})

// contract §2: the method is checked after the route, and Expect concerns the body: an unknown
// path is 404 and a wrong method 405 whatever the Expect; on a limited route the 417 comes after
// the rate limit and carries its headers (contract §7: every response of those routes does)
protocol('an unmet Expect is judged after route, method and rate limit', async ({ srv }) => {
  const expect = (line: string, extra: string[] = []) =>
    raw(srv.url, [request(line, ['Expect: teapot', 'Connection: close', ...extra])], { idleMs: 1000 })
  assertError(await expect('GET /api/v1/nothing HTTP/1.1'), 404, 'ROUTE_NOT_FOUND')
  const wrongMethod = await expect('DELETE /healthz HTTP/1.1')
  assertError(wrongMethod, 405, 'METHOD_NOT_ALLOWED')
  assert.is(header(wrongMethod.head, 'allow'), 'GET, HEAD')
  const limited = await expect('POST /api/v1/users HTTP/1.1', [`X-Forwarded-For: ${randomIp()}`, 'Content-Type: application/json', 'Content-Length: 2'])
  assertError(limited, 417, 'EXPECTATION_FAILED')
  assert.is(header(limited.head, 'x-ratelimit-limit'), '5')
  assert.is(header(limited.head, 'x-ratelimit-remaining'), '4')
})

// contract §2: no such path (any method) → 404; known path, other method → 405 with Allow. Node's
// parser refuses methods it does not know (and lower-case ones) before the app sees them.
protocol('a method the HTTP parser does not know still gets 404 or 405 with Allow, with the request id and CORS', async ({ srv }) => {
  const cases: Array<[string, number, string, string | undefined]> = [
    ['BREW /api/v1/links HTTP/1.1', 405, 'METHOD_NOT_ALLOWED', 'GET, HEAD, POST'],
    ['get /healthz HTTP/1.1', 405, 'METHOD_NOT_ALLOWED', 'GET, HEAD'],
    ['BREW /r/aZ3kP9qR?x=1 HTTP/1.1', 405, 'METHOD_NOT_ALLOWED', 'GET, HEAD'],
    ['BREW http://localhost/api/v1/users/me HTTP/1.1', 405, 'METHOD_NOT_ALLOWED', 'GET, HEAD, PATCH, DELETE'],
    ['BREW /api/v1/nothing HTTP/1.1', 404, 'ROUTE_NOT_FOUND', undefined],
  ]
  for (const [line, status, code, allow] of cases) {
    const res = await raw(srv.url, [request(line, ['X-Request-Id: brew-1', 'Origin: https://a.example'])], { idleMs: 1000 })
    assertError(res, status, code, line)
    assert.is(header(res.head, 'allow'), allow, line)
    assert.is(header(res.head, 'x-request-id'), 'brew-1', line)
    assert.is(header(res.head, 'access-control-allow-origin'), '*', line)
  }
  const plain = await raw(srv.url, [request('BREW /api/v1/nothing HTTP/1.1', [])], { idleMs: 1000 })
  assert.match(header(plain.head, 'x-request-id') ?? '', GENERATED_ID)
  assert.is(header(plain.head, 'access-control-allow-origin'), undefined)
})

// RFC 9112 9.3.2: responses to pipelined requests go out in request order; a malformed request
// after good ones must not cut their answers off
protocol('requests pipelined before a malformed one are answered first, in order', async ({ srv }) => {
  const good = request('GET /healthz HTTP/1.1', []) + request('GET /api/v1/nothing HTTP/1.1', []) // the first waits on the database
  for (const [refused, status] of [
    ['GET /heal\x01thz HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    [request('BREW /healthz HTTP/1.1', []), 405],
    [request('CONNECT example.com:443 HTTP/1.1', []), 404],
  ] as const) {
    const res = await raw(srv.url, [good + refused], { idleMs: 2000 })
    const statuses = [...`${res.head}\r\n\r\n${res.body}`.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]))
    assert.equal(statuses, [200, 404, status], statuses.join(', '))
    assert.ok(res.closed, 'the connection is closed after the refused request')
  }
})

// contract §2: 405 on a known path whatever the method; §1: a supplied X-Request-Id is reused —
// also when the refused request follows one with a body that does not end in a newline
protocol('an unknown method pipelined right after a JSON body still gets its 405 and its request id', async ({ srv }) => {
  const body = JSON.stringify({})
  const first = `POST /api/v1/users HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${randomIp()}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
  const res = await raw(srv.url, [first + request('BREW /api/v1/links HTTP/1.1', ['X-Request-Id: brew-after-body'])], { idleMs: 2000 })
  const text = `${res.head}\r\n\r\n${res.body}`
  assert.equal([...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])), [422, 405], text)
  const second = text.slice(text.lastIndexOf('HTTP/1.1 '))
  assert.is(header(second.slice(0, second.indexOf('\r\n\r\n')), 'x-request-id'), 'brew-after-body')
  assert.is(header(second.slice(0, second.indexOf('\r\n\r\n')), 'allow'), 'GET, HEAD, POST')
})

// contract §2: every error is answered in our shape; a request whose chunked body breaks while
// its handler waits for it is the refused request itself: answered at once, not after itself
protocol('a chunked body that breaks mid-request is answered 400 at once, also behind a pipelined request', async ({ srv }) => {
  const user = await newUser(srv.url)
  const broken =
    `POST /api/v1/links HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.token}\r\n` +
    'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n'
  for (const before of ['', request('GET /healthz HTTP/1.1', [])]) {
    const started = Date.now()
    const res = await raw(srv.url, [before + broken], { idleMs: 3000 })
    const statuses = [...`${res.head}\r\n\r\n${res.body}`.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]))
    assert.equal(statuses, before === '' ? [400] : [200, 400])
    assert.ok(res.closed, 'closed after the 400')
    assert.ok(Date.now() - started < 2500, `answered after ${Date.now() - started} ms, not at the client's idle timeout`)
  }
})

// contract §2: bad input never crashes the service. Node leaves a CONNECT's socket with no
// 'error' listener of its own: a client that resets it must not take the process down.
protocol('a CONNECT whose client resets the connection leaves the server running', async ({ srv }) => {
  const { hostname, port } = new URL(srv.url)
  const login = `POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${randomIp()}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`
  for (const [before, delay] of [['', 0], ['', 5], [login, 5]] as const) {
    const socket = connect(Number(port), hostname)
    socket.on('error', () => {})
    await new Promise<void>((r) => socket.once('connect', () => r()))
    socket.write(`${before}CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`)
    await sleep(delay)
    socket.resetAndDestroy()
  }
  await sleep(100)
  assert.is((await call(srv.url, 'GET', '/healthz')).status, 200)
})

// contract §8: header and request timeouts are set (slow clients cannot hold the server)
protocol('the server has finite header and request timeouts under 60 s', ({ srv }) => {
  const server = srv.service.server
  for (const [name, value] of [['headersTimeout', server.headersTimeout], ['requestTimeout', server.requestTimeout]] as const) {
    assert.ok(Number.isFinite(value) && value > 0 && value < 60_000, `${name} = ${value}`)
  }
  assert.ok(server.headersTimeout <= server.requestTimeout, 'headers arrive within the request timeout')
})

// contract §2: 500 only for the unexpected; hostile input is a client error, never 5xx
protocol('no hostile input gets a 5xx', async ({ srv }) => {
  const user = await newUser(srv.url)
  const auth = `Authorization: Bearer ${user.token}`
  const ip = () => `X-Forwarded-For: ${randomIp()}`
  const texts: Array<[string, string | Buffer]> = [
    ['bad percent-encoding', request('GET /r/%zz%zz%zz HTTP/1.1', ['Connection: close'])],
    ['encoded NUL in code', request('GET /r/%00%00%00%00 HTTP/1.1', ['Connection: close'])],
    ['encoded NUL in link path', request('GET /api/v1/links/%00abcdefg HTTP/1.1', [auth, 'Connection: close'])],
    ['raw UTF-8 in the path', Buffer.from(request('GET /r/\u00e4\u00f6\u00fc\u00e4\u00f6\u00fc\u00e4\u00f6 HTTP/1.1', ['Connection: close']), 'utf8')],
    ['8 KB path', request(`GET /api/v1/${'a'.repeat(8000)} HTTP/1.1`, ['Connection: close'])],
    ['asterisk-form', request('OPTIONS * HTTP/1.1', ['Connection: close'])],
    ['authority-form', request('CONNECT example.com:443 HTTP/1.1', ['Connection: close'])],
    ['unknown method', request('BREW /api/v1/links HTTP/1.1', ['Connection: close'])],
    ['lower-case method', request('get /healthz HTTP/1.1', ['Connection: close'])],
    ['HTTP/1.0 without Host', 'GET /healthz HTTP/1.0\r\n\r\n'],
    ['HTTP/9.9', 'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n'],
    ['Transfer-Encoding gzip', request('POST /api/v1/users HTTP/1.1', [ip(), 'Content-Type: application/json', 'Transfer-Encoding: gzip', 'Connection: close'])],
    ['Content-Length and Transfer-Encoding', request('POST /api/v1/users HTTP/1.1', [ip(), 'Content-Type: application/json', 'Content-Length: 5', 'Transfer-Encoding: chunked', 'Connection: close']) + '0\r\n\r\n'],
    ['negative Content-Length', request('POST /api/v1/users HTTP/1.1', [ip(), 'Content-Type: application/json', 'Content-Length: -1', 'Connection: close'])],
    ['huge Content-Length', request('POST /api/v1/links HTTP/1.1', [auth, 'Content-Type: application/json', 'Content-Length: 99999999999999999999999', 'Connection: close'])],
    ['bad chunk size', request('POST /api/v1/links HTTP/1.1', [auth, 'Content-Type: application/json', 'Transfer-Encoding: chunked', 'Connection: close']) + 'zz\r\n{}\r\n0\r\n\r\n'],
    ['two Authorization headers', request('GET /api/v1/links HTTP/1.1', [auth, auth, 'Connection: close'])],
    ['10 KB Authorization', request('GET /api/v1/links HTTP/1.1', [`Authorization: Bearer ${'A'.repeat(10_000)}`, 'Connection: close'])],
    ['garbage X-Forwarded-For', request('POST /api/v1/auth/login HTTP/1.1', ['X-Forwarded-For: not-an-ip, ::ffff:zz, 999.1.1.1', 'Content-Type: application/json', 'Content-Length: 2', 'Connection: close']) + '{}'],
    ['preflight with a huge declared body', request('OPTIONS /api/v1/links HTTP/1.1', ['Access-Control-Request-Method: POST', 'Origin: https://a.example', 'Content-Length: 999999', 'Connection: close'])],
    ['client hangs up mid-body', request('POST /api/v1/links HTTP/1.1', [auth, 'Content-Type: application/json', 'Content-Length: 100']) + '{"url":'],
  ]
  for (const [name, text] of texts) {
    const res = await raw(srv.url, [text], { idleMs: 1000 })
    assert.ok(res.status < 500, `${name}: ${res.status}\n${res.head}\n${res.body}`)
  }
  const bodies: Array<[string, string]> = [
    ['deeply nested JSON', '{"url":'.repeat(8000) + '1' + '}'.repeat(8000)],
    ['deeply nested array', '{"url":' + '['.repeat(30_000) + ']'.repeat(30_000) + '}'],
    ['__proto__ key', '{"__proto__":{"url":"https://example.com/"},"url":"https://example.com/p"}'],
    ['constructor key', '{"constructor":{"prototype":{"x":1}},"url":"https://example.com/c"}'],
    ['huge number', '{"url":1e999999}'],
    ['escaped lone surrogate', '{"url":"https://example.com/\\ud800"}'],
    ['escaped NUL', '{"url":"https://example.com/\\u0000"}'],
    ['url object', '{"url":{"toString":"x"}}'],
    ['code object', '{"url":"https://example.com/","code":["abcdefgh"]}'],
  ]
  for (const [name, text] of bodies) {
    const res = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: text })
    assert.ok(res.status < 500, `${name}: ${res.status} ${res.text}`)
    assert.ok(res.status === 201 || res.status === 422, `${name}: ${res.status} ${res.text}`)
  }
  for (const [name, text] of bodies) {
    const res = await call(srv.url, 'POST', '/api/v1/users', { body: text.replace(/"url"/g, '"username"') })
    assert.ok(res.status < 500, `register ${name}: ${res.status} ${res.text}`)
  }
  const health = await call(srv.url, 'GET', '/healthz')
  assert.is(health.status, 200)
  const errors = srv.logs.filter((l) => l.includes('"level":"error"'))
  assert.equal(errors, [], 'nothing was logged as an unexpected error')
})

protocol.run()
