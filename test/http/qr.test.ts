// GET /api/v1/links/{code}/qr: image/svg+xml encoding the link's short_url; size,
// margin and ecc options; the drawn matrix is the library's (uqr) own.
import * as assert from 'uvu/assert'
import { encode } from 'uqr'
import { assertQueryError, call, newLink, newUser, type Res, type User } from '../helpers/api.js'
import { serverSuite } from '../helpers/server.js'

/** Reads the modules back out of the SVG's path (runs of "Mx yhwv1h-wz"), without the margin. */
function modules(svg: string): { n: number; margin: number; dark: boolean[][] } {
  const n = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)![1])
  const grid = Array.from({ length: n }, () => Array<boolean>(n).fill(false))
  for (const [, x, y, w, w2] of svg.matchAll(/M(\d+) (\d+)h(\d+)v1h-(\d+)z/g)) {
    assert.is(w, w2)
    for (let i = 0; i < Number(w); i++) grid[Number(y)]![Number(x) + i] = true
  }
  // the margin is the blank border around the symbol
  let margin = 0
  while (grid[margin]!.every((m) => !m) && grid.every((row) => !row[margin])) margin++
  return { n, margin, dark: grid.slice(margin, n - margin).map((row) => row.slice(margin, n - margin)) }
}

const qr = (base: string, token: string, code: string, query = '') => call(base, 'GET', `/api/v1/links/${code}/qr${query}`, { token })

const test = serverSuite<{ user: User }>('link QR code', { BASE_URL: 'https://sho.rt' })
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('answers image/svg+xml whose modules are uqr’s encoding of short_url (ecc M, margin 4, 256 px)', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const res = await qr(srv.url, user.token, link.code)
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), 'image/svg+xml')
  assert.is(res.headers.get('content-disposition'), `inline; filename="${link.code}.svg"`)
  assert.is(Number(res.headers.get('content-length')), Buffer.byteLength(res.text))
  assert.match(res.text, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="256" height="256" /)
  const expected = encode(`https://sho.rt/r/${link.code}`, { ecc: 'M', border: 0 }).data
  const drawn = modules(res.text)
  assert.is(drawn.n, expected.length + 8)
  assert.is(drawn.margin, 4)
  assert.equal(drawn.dark, expected)
})

test('size, margin and ecc change the drawing; HEAD has no body', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const res = await qr(srv.url, user.token, link.code, '?size=1024&margin=0&ecc=H')
  assert.is(res.status, 200, res.text)
  assert.match(res.text, /width="1024" height="1024"/)
  const expected = encode(`https://sho.rt/r/${link.code}`, { ecc: 'H', border: 0 }).data
  const drawn = modules(res.text)
  assert.equal([drawn.n, drawn.margin], [expected.length, 0])
  assert.equal(drawn.dark, expected)
  const head = await call(srv.url, 'HEAD', `/api/v1/links/${link.code}/qr`, { token: user.token })
  assert.equal([head.status, head.text, head.headers.get('content-type')], [200, '', 'image/svg+xml'])
})

test('bad options are 422 INVALID_QUERY, before the link is looked up', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  assertQueryError(await qr(srv.url, user.token, link.code, '?size=31'), ['size'])
  assertQueryError(await qr(srv.url, user.token, link.code, '?size=4097&margin=17'), ['size', 'margin'])
  assertQueryError(await qr(srv.url, user.token, link.code, '?size=12.5&ecc=X'), ['size', 'ecc'])
  assertQueryError(await qr(srv.url, user.token, 'Unkn0wn9', '?margin=-1'), ['margin'])
  assert.is((await qr(srv.url, user.token, link.code, '?size=&margin=')).status, 200, 'empty means the default')
})

test('owner only: another account’s link is 404, no token is 401', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const other = await newUser(srv.url)
  const res = await qr(srv.url, other.token, link.code)
  assert.equal([res.status, res.body.code], [404, 'LINK_NOT_FOUND'])
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${link.code}/qr`)).status, 401)
  assert.is((await qr(srv.url, user.token, 'bad')).status, 404)
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${link.code}/qr/x`, { token: user.token })).body.code, 'ROUTE_NOT_FOUND')
  assert.is((await call(srv.url, 'POST', `/api/v1/links/${link.code}/qr`, { token: user.token })).status, 405)
})

test.run()
