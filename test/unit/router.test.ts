// Unit tests of the router (src/http/router.ts): exact matching, 404 vs 405, HEAD → GET.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Router, type Match } from '../../src/http/router.js'

const test = suite('router')

function table(): Router<string> {
  return new Router<string>()
    .add('GET', '/', 'home')
    .add('GET', '/r/:code', 'redirect')
    .add('POST', '/api/v1/auth/login', 'login')
    .add('POST', '/api/v1/users', 'register')
    .add('GET', '/api/v1/users/me', 'me')
    .add('PATCH', '/api/v1/users/me', 'patch-me')
    .add('DELETE', '/api/v1/users/me', 'delete-me')
    .add('GET', '/api/v1/links', 'list')
    .add('POST', '/api/v1/links', 'create')
    .add('GET', '/api/v1/links/:code', 'get-link')
    .add('PATCH', '/api/v1/links/:code', 'patch-link')
    .add('DELETE', '/api/v1/links/:code', 'delete-link')
}

function allowSet(m: Match<string>): string[] {
  if (m.found || m.allow === null) throw new Error(`expected a 405 match, got ${JSON.stringify(m)}`)
  return m.allow.split(',').map((s) => s.trim()).sort()
}

// STYLE (router): a static-path Map answers exact paths; contract §2: known path + its method → the route
test('a static path with its method matches with an empty param', () => {
  assert.equal(table().find('POST', '/api/v1/users'), { found: true, value: 'register', param: '', path: '/api/v1/users' })
  assert.equal(table().find('GET', '/'), { found: true, value: 'home', param: '', path: '/' })
})

// spec §4: GET /r/{code}; contract §4: /api/v1/links/{code} — one path parameter, one segment
test('a parameter route yields its one segment as param', () => {
  assert.equal(table().find('GET', '/r/aZ3kP9qR'), { found: true, value: 'redirect', param: 'aZ3kP9qR', path: '/r/:code' })
  assert.equal(table().find('DELETE', '/api/v1/links/abc'), { found: true, value: 'delete-link', param: 'abc', path: '/api/v1/links/:code' })
})

// contract §2: 404 ROUTE_NOT_FOUND for a path that does not exist (any method), e.g. /api/v1/login
test('an unknown path is "no path" (allow null) for every method', () => {
  const r = table()
  for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    assert.equal(r.find(method, '/api/v1/login'), { found: false, allow: null }, method)
  }
})

// contract §2: /api/v1/users/ (trailing slash) and /r/ are no such path
test('a trailing slash, an empty parameter or an extra segment do not match', () => {
  const r = table()
  for (const path of ['/api/v1/users/', '/r/', '/r', '/r/abc/def', '/api/v1/links/', '/api/v1/links/a/b', '/api/v1/users/me/', '//', '']) {
    assert.equal(r.find('GET', path), { found: false, allow: null }, JSON.stringify(path))
  }
})

// contract §2 (routing): /API/v1/users is no such path — paths (and methods) are case-sensitive
test('matching is case-sensitive', () => {
  const r = table()
  for (const path of ['/API/v1/users', '/api/V1/users', '/api/v1/Users', '/R/aZ3kP9qR']) {
    assert.equal(r.find('POST', path), { found: false, allow: null }, path)
  }
  assert.equal(r.find('post', '/api/v1/users'), { found: false, allow: 'POST' }, 'methods are case-sensitive too')
})

// contract §2: 404 for no such path — a prefix of a route is not the route
test('a path that merely starts like a static route does not match it', () => {
  const r = table()
  assert.equal(r.find('GET', '/api/v1/linksX'), { found: false, allow: null })
  assert.equal(r.find('GET', '/api/v1/links?x'), { found: false, allow: null }, 'the router gets paths, not targets')
})

// contract §2: 405 METHOD_NOT_ALLOWED on a known path with another method; carries Allow
test('a known path with another method reports the allowed methods', () => {
  const r = table()
  assert.equal(allowSet(r.find('DELETE', '/api/v1/auth/login')), ['POST'])
  assert.equal(allowSet(r.find('PUT', '/api/v1/links')), ['GET', 'HEAD', 'POST'])
  assert.equal(allowSet(r.find('POST', '/api/v1/users/me')), ['DELETE', 'GET', 'HEAD', 'PATCH'])
  assert.equal(allowSet(r.find('POST', '/r/abc')), ['GET', 'HEAD'])
  assert.equal(allowSet(r.find('PUT', '/api/v1/links/abc')), ['DELETE', 'GET', 'HEAD', 'PATCH'])
})

// contract §2: 405 carries Allow; RFC 9110 9.3.2: HEAD is allowed wherever GET is
test('Allow lists HEAD once, right after GET, and follows registration order otherwise', () => {
  const r = table()
  const m = r.find('PUT', '/api/v1/links')
  assert.equal(m, { found: false, allow: 'GET, HEAD, POST' })
  const explicit = new Router<string>().add('GET', '/x', 'g').add('HEAD', '/x', 'h')
  assert.equal(explicit.find('PUT', '/x'), { found: false, allow: 'GET, HEAD' })
})

// RFC 9110 9.3.2 / STYLE: HEAD goes wherever GET goes
test('HEAD is answered by the GET handler where no HEAD handler exists', () => {
  const r = table()
  assert.equal(r.find('HEAD', '/'), { found: true, value: 'home', param: '', path: '/' })
  assert.equal(r.find('HEAD', '/r/aZ3kP9qR'), { found: true, value: 'redirect', param: 'aZ3kP9qR', path: '/r/:code' })
  assert.equal(r.find('HEAD', '/api/v1/links'), { found: true, value: 'list', param: '', path: '/api/v1/links' })
})

// RFC 9110 9.3.2: HEAD falls back to GET only when no HEAD handler exists
test('an explicit HEAD handler wins over the GET fallback', () => {
  const r = new Router<string>().add('GET', '/x', 'g').add('HEAD', '/x', 'h')
  assert.equal(r.find('HEAD', '/x'), { found: true, value: 'h', param: '', path: '/x' })
})

// contract §2: 405 on a known path with another method (HEAD without GET is another method)
test('HEAD on a path without GET is 405, not a match', () => {
  assert.equal(allowSet(table().find('HEAD', '/api/v1/auth/login')), ['POST'])
})

// STYLE (router): check the static-path Map first, then the param patterns
test('a static route wins over a parameter route with the same prefix', () => {
  const r = new Router<string>().add('GET', '/u/:id', 'by-id').add('GET', '/u/me', 'me')
  assert.equal(r.find('GET', '/u/me'), { found: true, value: 'me', param: '', path: '/u/me' })
  assert.equal(r.find('GET', '/u/42'), { found: true, value: 'by-id', param: '42', path: '/u/:id' })
})

// contract §2: Allow names each allowed method (once)
test('adding the same method twice keeps the last value and one Allow entry', () => {
  const r = new Router<string>().add('POST', '/x', 'a').add('POST', '/x', 'b')
  assert.equal(r.find('POST', '/x'), { found: true, value: 'b', param: '', path: '/x' })
  assert.equal(r.find('GET', '/x'), { found: false, allow: 'POST' })
})

// The web app's client routes (/app/links/aZ3kP9qR/edit) all reach its one handler
test('a rest route yields the whole rest of the path, after static and parameter routes', () => {
  const r = new Router<string>().add('GET', '/app/about', 'about').add('GET', '/app/*path', 'files').add('GET', '/app/:one', 'one')
  assert.equal(r.find('GET', '/app/links/aZ3kP9qR/edit'), { found: true, value: 'files', param: 'links/aZ3kP9qR/edit', path: '/app/*path' })
  assert.equal(r.find('GET', '/app/x'), { found: true, value: 'one', param: 'x', path: '/app/:one' })
  assert.equal(r.find('GET', '/app/about'), { found: true, value: 'about', param: '', path: '/app/about' })
  assert.equal(r.find('GET', '/app'), { found: false, allow: null })
  assert.equal(r.find('GET', '/appx/y'), { found: false, allow: null })
  assert.equal(r.find('POST', '/app/a/b'), { found: false, allow: 'GET, HEAD' })
  assert.equal(r.routes().map((x) => x.path), ['/app/about', '/app/:one', '/app/*path'])
})

// The document has no path with a trailing slash: "/app/" is "/app/{path}" with an empty path.
test('a rest route also takes the empty rest: "/app/*path" serves "/app/" with param ""', () => {
  const r = new Router<string>().add('GET', '/app/*path', 'files')
  assert.equal(r.find('GET', '/app/'), { found: true, value: 'files', param: '', path: '/app/*path' })
  assert.equal(r.find('HEAD', '/app/'), { found: true, value: 'files', param: '', path: '/app/*path' })
  assert.equal(r.find('GET', '/app'), { found: false, allow: null })
})

test.run()
