// Hardening from the security review: X-Content-Type-Options: nosniff on every
// response; Cache-Control: no-store on every authenticated response; link URLs and display names
// with invisible or bidi-control characters refused; the embedded database's files readable by
// their owner only.
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, type Res, type User } from '../helpers/api.js'
import { header, raw } from '../helpers/raw.js'
import { feedSettled, serverSuite, startServer } from '../helpers/server.js'

const test = serverSuite<{ user: User }>('response headers and input hardening')
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

// X-Content-Type-Options: nosniff on every response, the raw and fast paths included
test('every response carries X-Content-Type-Options: nosniff', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  await feedSettled(srv)
  const host = new URL(srv.url).host
  const responses: Array<[string, Res]> = [
    ['GET /healthz', await call(srv.url, 'GET', '/healthz')],
    ['GET /', await call(srv.url, 'GET', '/')],
    ['404 route', await call(srv.url, 'GET', '/nowhere')],
    ['405', await call(srv.url, 'PUT', '/api/v1/links')],
    ['422', await call(srv.url, 'POST', '/api/v1/users', { body: {} })],
    ['401', await call(srv.url, 'GET', '/api/v1/users/me')],
    ['preflight', await call(srv.url, 'OPTIONS', '/api/v1/links', { headers: { origin: 'https://a.example', 'access-control-request-method': 'POST' } })],
    ['201', await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/n' } })],
    ['302, from the database', await call(srv.url, 'GET', `/r/${link.code}`)],
    ['302, from the cache', await call(srv.url, 'GET', `/r/${link.code}`)],
    ['404 link', await call(srv.url, 'GET', '/r/Unkn0wnX')],
    ['404 link, from the cache', await call(srv.url, 'GET', '/r/Unkn0wnX')],
    ['HEAD', await call(srv.url, 'HEAD', `/r/${link.code}`)],
    ['204', await call(srv.url, 'DELETE', `/api/v1/links/${link.code}`, { token: user.token })],
  ]
  for (const [label, res] of responses) assert.is(res.headers.get('x-content-type-options'), 'nosniff', label)
  // Written straight to the socket: the parser's refusals and CONNECT.
  const malformed = await raw(srv.url, ['GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'])
  const connect = await raw(srv.url, [`CONNECT ${host} HTTP/1.1\r\nHost: ${host}\r\n\r\n`])
  const method = await raw(srv.url, [`BREW /api/v1/links HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`])
  for (const [label, r, status] of [['malformed', malformed, 400], ['CONNECT', connect, 404], ['unknown method', method, 405]] as const) {
    assert.is(r.status, status, label)
    assert.is(header(r.head, 'x-content-type-options'), 'nosniff', label)
  }
})

// Cache-Control: no-store on every authenticated response
test('every response of an authenticated route carries Cache-Control: no-store', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const token = user.token
  const responses: Array<[string, Res]> = [
    ['GET /users/me', await call(srv.url, 'GET', '/api/v1/users/me', { token })],
    ['PATCH /users/me', await call(srv.url, 'PATCH', '/api/v1/users/me', { token, body: { display_name: 'Renamed' } })],
    ['GET /links', await call(srv.url, 'GET', '/api/v1/links', { token })],
    ['GET /links/{code}', await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token })],
    ['POST /links', await call(srv.url, 'POST', '/api/v1/links', { token, body: { url: 'https://example.com/x' } })],
    ['PATCH /links/{code}', await call(srv.url, 'PATCH', `/api/v1/links/${link.code}`, { token, body: { url: 'https://example.com/y' } })],
    ['422', await call(srv.url, 'POST', '/api/v1/links', { token, body: { url: 'nope' } })],
    ['404', await call(srv.url, 'GET', '/api/v1/links/Unkn0wnX', { token })],
    ['DELETE /links/{code}', await call(srv.url, 'DELETE', `/api/v1/links/${link.code}`, { token })],
    ['401 on an authenticated route', await call(srv.url, 'GET', '/api/v1/links')],
  ]
  for (const [label, res] of responses) assert.is(res.headers.get('cache-control'), 'no-store', `${label} (${res.status})`)
})

// "https://exa\u200bmple.com" was stored as typed while a browser goes to example.com
test('a link URL with an invisible or bidi-control character is 422 url INVALID, on create and on change', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  for (const url of ['https://exa\u200bmple.com/', 'https://example.com/\u202Efdp.exe', 'https://example.com/a\u00adb', 'https://\ufeffexample.com/']) {
    for (const res of [
      await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url } }),
      await call(srv.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body: { url } }),
    ]) {
      assert.is(res.status, 422, JSON.stringify(url))
      assert.equal(res.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]), [['url', 'INVALID']])
    }
  }
})

// Display names accepted U+202E
test('a display name with an invisible or bidi-control character is 422 display_name INVALID', async ({ srv, user }) => {
  for (const name of ['Bob\u202Egnp.exe', 'Al\u200bice', 'Eve\u2066x']) {
    const reg = await call(srv.url, 'POST', '/api/v1/users', { body: { username: `u${Date.now()}`, password: 'correct horse', display_name: name } })
    const patch = await call(srv.url, 'PATCH', '/api/v1/users/me', { token: user.token, body: { display_name: name } })
    for (const res of [reg, patch]) {
      assert.is(res.status, 422, JSON.stringify(name))
      assert.equal(res.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]), [['display_name', 'INVALID']])
    }
  }
})

test.run()

// ---------------------------------------------------------------------------------------------
if (process.env.DATABASE_URL !== undefined) {
  process.stdout.write('hardening.test: DATA_DIR permissions not checked: they concern the embedded database only\n')
} else {
  const files = suite<{ root: string }>('DATA_DIR permissions')
  files.before((ctx) => {
    ctx.root = mkdtempSync(join(tmpdir(), 'link-service-perm-'))
  })
  files.after(({ root }) => rmSync(root, { recursive: true, force: true }))

  /** Every path under dir whose mode lets group or others in. */
  function openToOthers(dir: string): string[] {
    const out: string[] = []
    for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      const path = join(entry.parentPath, entry.name)
      if ((statSync(path).mode & 0o077) !== 0) out.push(path)
    }
    return out
  }

  // Every file the embedded engine writes under DATA_DIR is readable by its owner only
  files('a new DATA_DIR, written to, holds only owner-only files; files an earlier release left open are closed at start', async ({ root }) => {
    const dir = join(root, 'data')
    let srv = await startServer({ DATA_DIR: dir })
    const user = await newUser(srv.url)
    await newLink(srv.url, user.token)
    await srv.close()
    assert.equal(openToOthers(dir), [])
    assert.is(statSync(dir).mode & 0o777, 0o700)
    // As PGlite left them before this release: 0666 files, 0777 directories.
    const stray = join(dir, 'base', 'left-by-an-earlier-release')
    writeFileSync(stray, 'x')
    chmodSync(stray, 0o666)
    chmodSync(join(dir, 'base'), 0o777)
    assert.is(openToOthers(dir).length, 2)
    srv = await startServer({ DATA_DIR: dir })
    await srv.close()
    assert.equal(openToOthers(dir), [])
  })

  files.run()
}
