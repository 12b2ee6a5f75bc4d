// The login/registration rate limit (spec §4 rule 1, §7, §8; contract §2 order of checks, §7),
// black-box over HTTP. Each test uses its own fixed client address (X-Forwarded-For; the default
// test server trusts 127.0.0.1 as a proxy), so tests never share a bucket.
import * as assert from 'uvu/assert'
import { call, newLink, newUser, randomIp, startPasswordThreads, uniqueName, type Res } from '../helpers/api.js'
import { header, raw } from '../helpers/raw.js'
import { serverSuite, type TestServer } from '../helpers/server.js'
import { sleep } from '../helpers/wait.js'

/** A registration that fails validation at once (422): cheap, and it still takes a token. */
const badRegister = (srv: TestServer, ip: string) => call(srv.url, 'POST', '/api/v1/users', { ip, body: {} })
/** A login that fails validation at once (422). */
const badLogin = (srv: TestServer, ip: string) => call(srv.url, 'POST', '/api/v1/auth/login', { ip, body: {} })

/** Asserts the rate-limit headers of an allowed response. */
function assertAllowed(res: Res, remaining: number, what = ''): void {
  assert.ok(res.status !== 429, `${what} was limited: ${res.text}`)
  assert.is(res.headers.get('x-ratelimit-limit'), '5', `${what} X-RateLimit-Limit`)
  assert.is(res.headers.get('x-ratelimit-remaining'), String(remaining), `${what} X-RateLimit-Remaining`)
  assert.is(res.headers.get('retry-after'), null, `${what} has no Retry-After`)
}

/** Asserts a 429 RATE_LIMIT_EXCEEDED with its headers; returns Retry-After in seconds. */
function assertLimited(res: Res, what = ''): number {
  assert.is(res.status, 429, `${what} status: ${res.text}`)
  assert.is(res.headers.get('content-type'), 'application/json; charset=utf-8')
  assert.is(res.body?.code, 'RATE_LIMIT_EXCEEDED')
  assert.type(res.body?.message, 'string')
  assert.is(res.headers.get('x-ratelimit-limit'), '5', `${what} X-RateLimit-Limit`)
  assert.is(res.headers.get('x-ratelimit-remaining'), '0', `${what} X-RateLimit-Remaining`)
  const retryAfter = res.headers.get('retry-after') ?? ''
  assert.ok(/^[0-9]+$/.test(retryAfter), `Retry-After "${retryAfter}" is whole seconds`)
  assert.ok(Number(retryAfter) >= 1, `Retry-After ${retryAfter} is at least 1`)
  return Number(retryAfter)
}

/** Takes all 5 tokens of `ip` with cheap requests (asserting the countdown). */
async function drain(srv: TestServer, ip: string): Promise<void> {
  for (let left = 4; left >= 0; left--) assertAllowed(await badRegister(srv, ip), left, `drain ${4 - left}`)
}


// =============================================================================================

const test = serverSuite('rate limit on POST /api/v1/users and /api/v1/auth/login')
test.before(({ srv }) => startPasswordThreads(srv.url))

// spec §8: burst 5; a denied request returns 429 RATE_LIMIT_EXCEEDED with Retry-After;
// contract §7: X-RateLimit-Remaining = whole tokens left; Retry-After whole seconds, at least 1
test('5 quick requests pass with Remaining 4,3,2,1,0 and the 6th is 429 with Retry-After ≥ 1', async ({ srv }) => {
  const ip = randomIp()
  const remaining: Array<string | null> = []
  for (let i = 0; i < 5; i++) {
    const res = await badRegister(srv, ip)
    assert.is(res.status, 422, res.text)
    assert.is(res.headers.get('x-ratelimit-limit'), '5')
    remaining.push(res.headers.get('x-ratelimit-remaining'))
  }
  assert.equal(remaining, ['4', '3', '2', '1', '0'])
  assertLimited(await badRegister(srv, ip), '6th')
  assertLimited(await badRegister(srv, ip), '7th')
})

// contract §7: every such request takes a token, whatever its outcome (401 and 422 included)
test('failed logins (401) and invalid bodies (422) take tokens too', async ({ srv }) => {
  const ip = randomIp()
  const wrong = { username: uniqueName(), password: 'not the password' }
  for (let left = 4; left >= 2; left--) {
    const res = await call(srv.url, 'POST', '/api/v1/auth/login', { ip, body: wrong })
    assert.is(res.status, 401, res.text)
    assert.is(res.body.code, 'INVALID_CREDENTIALS')
    assertAllowed(res, left, `401 #${5 - left}`)
  }
  assertAllowed(await badLogin(srv, ip), 1, '422 login')
  assertAllowed(await badRegister(srv, ip), 0, '422 registration')
  assertLimited(await call(srv.url, 'POST', '/api/v1/auth/login', { ip, body: wrong }), 'login after 5')
})

// spec §8: responses from those two routes include X-RateLimit-Limit and X-RateLimit-Remaining
// (each outcome on its own fresh address, so Remaining is exactly 4)
test('every outcome (201, 200, 401, 409, 422, 415, 413) carries X-RateLimit-Limit: 5 and Remaining', async ({ srv }) => {
  const username = uniqueName()
  const password = 'correct horse'
  const reg = await call(srv.url, 'POST', '/api/v1/users', { ip: randomIp(), body: { username, password, display_name: 'Rate Test' } })
  assert.is(reg.status, 201, reg.text)
  assertAllowed(reg, 4, '201')

  const ok = await call(srv.url, 'POST', '/api/v1/auth/login', { ip: randomIp(), body: { username, password } })
  assert.is(ok.status, 200, ok.text)
  assertAllowed(ok, 4, '200')

  const bad = await call(srv.url, 'POST', '/api/v1/auth/login', { ip: randomIp(), body: { username, password: 'wrong password' } })
  assert.is(bad.status, 401, bad.text)
  assertAllowed(bad, 4, '401')

  const taken = await call(srv.url, 'POST', '/api/v1/users', { ip: randomIp(), body: { username, password, display_name: 'Again' } })
  assert.is(taken.status, 409, taken.text)
  assertAllowed(taken, 4, '409')

  for (const path of ['/api/v1/users', '/api/v1/auth/login']) {
    const invalid = await call(srv.url, 'POST', path, { ip: randomIp(), body: '{"username":' })
    assert.is(invalid.status, 422, invalid.text)
    assertAllowed(invalid, 4, `422 ${path}`)

    const media = await call(srv.url, 'POST', path, { ip: randomIp(), body: 'x', headers: { 'content-type': 'text/plain' } })
    assert.is(media.status, 415, media.text)
    assertAllowed(media, 4, `415 ${path}`)

    // 413 on a declared Content-Length: sent over a raw socket, the body never follows
    const big = await raw(srv.url, [
      `POST ${path} HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: ${randomIp()}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 70000\r\n\r\n',
    ])
    assert.is(big.status, 413, big.head)
    assert.is(header(big.head, 'x-ratelimit-limit'), '5', '413 X-RateLimit-Limit')
    assert.is(header(big.head, 'x-ratelimit-remaining'), '4', '413 X-RateLimit-Remaining')
  }
})

// spec §4 rule 1: POST /api/v1/users and POST /api/v1/auth/login share one per-client-IP rate limit
test('registration and login share one bucket', async ({ srv }) => {
  const ip = randomIp()
  assertAllowed(await badRegister(srv, ip), 4, 'users')
  assertAllowed(await badLogin(srv, ip), 3, 'login')
  assertAllowed(await badRegister(srv, ip), 2, 'users')
  assertAllowed(await badLogin(srv, ip), 1, 'login')
  assertAllowed(await badRegister(srv, ip), 0, 'users')
  assertLimited(await badLogin(srv, ip), 'login')
  assertLimited(await badRegister(srv, ip), 'users')
})

// spec §8: counted per client IP address
test('a different client address is unaffected by a drained one', async ({ srv }) => {
  const drained = randomIp()
  await drain(srv, drained)
  assertLimited(await badLogin(srv, drained))
  const other = randomIp()
  assertAllowed(await badLogin(srv, other), 4, 'other address')
  assertAllowed(await badRegister(srv, other), 3, 'other address')
  assertLimited(await badRegister(srv, drained))
})

// spec §8: sustained rate 5 per second; clients honour Retry-After
test('after waiting Retry-After (about a second) requests pass again with a full bucket', async ({ srv }) => {
  const ip = randomIp()
  await drain(srv, ip)
  const retryAfter = assertLimited(await badRegister(srv, ip))
  await sleep(Math.max(1, retryAfter) * 1000 + 100)
  // refilled at 5 per second up to the capacity of 5: after 1.1 s the bucket is full again
  const res = await badRegister(srv, ip)
  assert.is(res.status, 422, res.text)
  assertAllowed(res, 4, 'after waiting')
})

// spec §8 / contract §7: only the two routes are limited and carry the headers
test('other routes carry no X-RateLimit headers and are not limited, even for a drained address', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token, 'https://example.com/rl')
  const ip = randomIp()
  await drain(srv, ip)
  assertLimited(await badRegister(srv, ip))
  const requests: Array<[string, string, Parameters<typeof call>[3]]> = [
    ['GET', '/api/v1/links', { ip, token: user.token }],
    ['POST', '/api/v1/links', { ip, token: user.token, body: { url: 'https://example.com/more' } }],
    ['GET', `/api/v1/links/${link.code}`, { ip, token: user.token }],
    ['GET', `/r/${link.code}`, { ip }],
    ['HEAD', `/r/${link.code}`, { ip }],
    ['GET', '/api/v1/users/me', { ip, token: user.token }],
    ['GET', '/', { ip }],
    ['GET', '/healthz', { ip }],
  ]
  for (const [method, path, opts] of requests) {
    for (let i = 0; i < 7; i++) {
      // seven in a row: more than the burst, so a limit would show
      if (method === 'POST' && i > 0) break
      const res = await call(srv.url, method, path, opts)
      assert.ok(res.status < 400, `${method} ${path} #${i + 1}: ${res.status} ${res.text}`)
      assert.is(res.headers.get('x-ratelimit-limit'), null, `${method} ${path}`)
      assert.is(res.headers.get('x-ratelimit-remaining'), null, `${method} ${path}`)
      assert.is(res.headers.get('retry-after'), null, `${method} ${path}`)
    }
  }
  const r = await call(srv.url, 'GET', '/r/ZZZZZZZZ', { ip })
  assert.is(r.status, 404)
  assert.is(r.headers.get('x-ratelimit-limit'), null)
})

// contract §7: only the two routes take tokens
test('requests to other routes take no token from the address', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  const ip = randomIp()
  for (let i = 0; i < 6; i++) {
    assert.is((await call(srv.url, 'GET', '/api/v1/links', { ip, token: user.token })).status, 200)
    assert.is((await call(srv.url, 'GET', `/r/${link.code}`, { ip })).status, 302)
  }
  assertAllowed(await badRegister(srv, ip), 4, 'first limited request')
})

// contract §6: preflights take no rate-limit token; contract §2: method (405) is checked before the rate limit
test('CORS preflights and wrong-method requests on the limited paths take no token', async ({ srv }) => {
  const ip = randomIp()
  for (let i = 0; i < 6; i++) {
    const pre = await call(srv.url, 'OPTIONS', '/api/v1/users', {
      ip,
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    })
    assert.is(pre.status, 204)
    const wrong = await call(srv.url, 'GET', '/api/v1/auth/login', { ip })
    assert.is(wrong.status, 405)
    assert.is(wrong.body.code, 'METHOD_NOT_ALLOWED')
  }
  assertAllowed(await badLogin(srv, ip), 4, 'first POST')
})

// contract §7: X-Forwarded-For counts only through a listed proxy: its right-most address that is not a listed proxy
test('with the proxy 127.0.0.1 trusted, "X-Forwarded-For: <ip>, 127.0.0.1" counts as <ip>', async ({ srv }) => {
  const ip = randomIp()
  for (let left = 4; left >= 0; left--) {
    const res = await call(srv.url, 'POST', '/api/v1/users', { body: {}, headers: { 'x-forwarded-for': `${ip}, 127.0.0.1` } })
    assertAllowed(res, left, `#${5 - left}`)
  }
  // the same client, seen without the extra proxy hop, shares the bucket
  assertLimited(await badRegister(srv, ip), 'plain address')
})

// contract §7: the right-most non-proxy address counts, so a client cannot dodge the limit by prepending addresses
test('addresses a client prepends to X-Forwarded-For do not give it new buckets', async ({ srv }) => {
  const ip = randomIp()
  for (let left = 4; left >= 0; left--) {
    const res = await call(srv.url, 'POST', '/api/v1/auth/login', { body: {}, headers: { 'x-forwarded-for': `${randomIp()}, ${ip}` } })
    assertAllowed(res, left, `#${5 - left}`)
  }
  const res = await call(srv.url, 'POST', '/api/v1/auth/login', { body: {}, headers: { 'x-forwarded-for': `${randomIp()}, ${ip}` } })
  assertLimited(res, 'spoofed left part')
})

test.run()

// =============================================================================================

const direct = serverSuite('rate limit without TRUST_PROXY', { TRUST_PROXY: '' })

// contract §7: only when TRUST_PROXY lists the peer does X-Forwarded-For count; otherwise the peer address is the client
direct('X-Forwarded-For is ignored: every request from 127.0.0.1 shares one bucket', async ({ srv }) => {
  for (let left = 4; left >= 0; left--) {
    assertAllowed(await badRegister(srv, randomIp()), left, `#${5 - left}`)
  }
  assertLimited(await badLogin(srv, randomIp()), '6th with yet another X-Forwarded-For')
})

direct.run()
