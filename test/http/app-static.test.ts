// The web app's files at /app/: where / sends browsers, the headers that keep the app
// safe (CSP, nosniff) and cached right, client routes, 404s, and SERVE_APP=off.
import { gunzipSync } from 'node:zlib'
import * as assert from 'uvu/assert'
import { call } from '../helpers/api.js'
import { APP_DIR, serverSuite } from '../helpers/server.js'
import { AppFiles } from '../../src/web/static-files.js'

const test = serverSuite('web app files')

/** The files index.html names: the stylesheet, the icon, every module. */
async function assetPaths(base: string): Promise<string[]> {
  const html = (await call(base, 'GET', '/app/')).text
  return [...html.matchAll(/(?:href|src)="(\/app\/assets\/[^"]+)"/g)].map((m) => m[1]!)
}

// spec §4: with APP_URL unset, GET / brings a browser to the app
test('GET and HEAD / answer 301 to {BASE_URL}/app/ when APP_URL is unset', async ({ srv }) => {
  for (const method of ['GET', 'HEAD']) {
    const res = await call(srv.url, method, '/')
    assert.is(res.status, 301)
    assert.is(res.headers.get('location'), `${srv.service.deps.baseUrl}/app/`)
  }
})

test('/app without its slash answers 301 to /app/', async ({ srv }) => {
  const res = await call(srv.url, 'GET', '/app')
  assert.is(res.status, 301)
  assert.is(res.headers.get('location'), `${srv.service.deps.baseUrl}/app/`)
})

// Strict CSP (default-src 'self', no inline script), nosniff, no-cache for the HTML
test('index.html answers /app/ and every client route, with a strict CSP, nosniff and no-cache', async ({ srv }) => {
  for (const path of ['/app/', '/app/links', '/app/links/aZ3kP9qR/edit', '/app/sessions/']) {
    const res = await call(srv.url, 'GET', path)
    assert.is(res.status, 200, path)
    assert.is(res.headers.get('content-type'), 'text/html; charset=utf-8')
    assert.is(res.headers.get('cache-control'), 'no-cache')
    assert.is(res.headers.get('x-content-type-options'), 'nosniff')
    const csp = res.headers.get('content-security-policy')!
    assert.ok(csp.startsWith("default-src 'self';"), csp)
    assert.ok(csp.includes("script-src 'self';") && csp.includes("frame-ancestors 'none'"), csp)
    assert.not.match(csp, /unsafe-inline|unsafe-eval|\*|https?:/)
    assert.match(res.text, /<script type="module" src="\/app\/assets\/main\.[\w-]{10}\.js"><\/script>/)
  }
})

// CSP "no inline script": the HTML holds no script body, no event attribute and no style attribute
test('index.html has no inline script, event handler or style', async ({ srv }) => {
  const html = (await call(srv.url, 'GET', '/app/')).text
  assert.not.match(html, /<script(?![^>]*\bsrc=)[^>]*>/)
  assert.not.match(html, /\son[a-z]+=/i)
  assert.not.match(html, /\sstyle=|<style/i)
})

// Long caching for content-hashed assets
test('content-hashed assets are cached for a year as immutable, with their types and the same CSP', async ({ srv }) => {
  const paths = await assetPaths(srv.url)
  assert.ok(paths.length >= 10, paths.join(' '))
  const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' }
  for (const path of paths) {
    assert.match(path, /\.[\w-]{10}\.(js|css|svg)$/)
    const res = await call(srv.url, 'GET', path)
    assert.is(res.status, 200, path)
    assert.is(res.headers.get('cache-control'), 'public, max-age=31536000, immutable')
    assert.is(res.headers.get('content-type'), types[path.split('.').pop()!])
    assert.is(res.headers.get('x-content-type-options'), 'nosniff')
    assert.ok(res.headers.get('content-security-policy')?.startsWith("default-src 'self';"))
  }
})

test('a matching If-None-Match gets 304 without a body; HEAD gets the headers alone', async ({ srv }) => {
  const [asset] = await assetPaths(srv.url)
  const first = await call(srv.url, 'GET', asset!)
  const etag = first.headers.get('etag')!
  const again = await call(srv.url, 'GET', asset!, { headers: { 'if-none-match': `"other", ${etag}` } })
  assert.equal([again.status, again.text, again.headers.get('etag')], [304, '', etag])
  const head = await call(srv.url, 'HEAD', '/app/')
  assert.equal([head.status, head.text, head.headers.get('cache-control')], [200, '', 'no-cache'])
})

test('gzip is sent to a client that accepts it, and never to one that refuses it', async ({ srv }) => {
  const paths = await assetPaths(srv.url)
  const css = paths.find((p) => p.endsWith('.css'))!
  const plain = await fetch(srv.url + css, { headers: { 'accept-encoding': 'identity' } })
  assert.is(plain.headers.get('content-encoding'), null)
  const text = await plain.text()
  const gzip = await call(srv.url, 'GET', css, { headers: { 'accept-encoding': 'br, gzip;q=0.8' } })
  assert.is(gzip.headers.get('content-encoding'), 'gzip')
  assert.is(gzip.headers.get('vary'), 'Accept-Encoding')
  assert.is(gzip.text, text) // fetch decodes it
  const refused = await fetch(srv.url + css, { headers: { 'accept-encoding': 'gzip;q=0, identity' } })
  assert.is(refused.headers.get('content-encoding'), null)
  await refused.arrayBuffer()
})

// contract §2: one error shape for every 404
test('an unknown file name under /app/ is 404 ROUTE_NOT_FOUND, JSON', async ({ srv }) => {
  for (const path of ['/app/assets/main.js', '/app/favicon.ico', '/app/links/x.html']) {
    const res = await call(srv.url, 'GET', path)
    assert.is(res.status, 404, path)
    assert.is(res.body.code, 'ROUTE_NOT_FOUND')
  }
  const post = await call(srv.url, 'POST', '/app/links')
  assert.is(post.status, 405)
  assert.is(post.headers.get('allow'), 'GET, HEAD')
})

/** Bytes over the wire for `path`, gzipped when the server sends it so. */
async function wireBytes(base: string, path: string): Promise<number> {
  const res = await fetch(base + path, { headers: { 'accept-encoding': 'gzip' } })
  const body = Buffer.from(await res.arrayBuffer())
  assert.is(res.status, 200, path)
  return res.headers.get('content-encoding') === 'gzip' ? Number(res.headers.get('content-length')) : body.length
}

// "the whole app under 50 KB gzipped", in any one language: a browser fetches only its own catalogue
test('the whole app in any one of its languages is under 50 KB gzipped', async ({ srv }) => {
  const files = srv.service.deps.appFiles!
  assert.ok(files.gzipBytes < 50 * 1024, `${files.gzipBytes} bytes`)
  // and the figure is what goes over the wire: the app and the largest catalogue
  let wire = 0
  for (const path of ['/app/', ...(await assetPaths(srv.url))]) wire += await wireBytes(srv.url, path)
  const html = (await call(srv.url, 'GET', '/app/')).text
  const meta = /<meta name="catalogues" content="([^"]+)">/.exec(html)![1]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&')
  const catalogues = JSON.parse(meta) as Record<string, { name: string; dir: string; href: string }>
  assert.equal(Object.keys(catalogues).sort(), ['ar', 'de', 'en', 'es', 'fr', 'ja'])
  assert.equal([catalogues.ar!.dir, catalogues.de!.dir, catalogues.de!.name], ['rtl', 'ltr', 'Deutsch'])
  const sizes = await Promise.all(Object.values(catalogues).map((c) => wireBytes(srv.url, c.href)))
  assert.ok(wire + Math.max(...sizes) <= files.gzipBytes, `${wire} + ${Math.max(...sizes)} ≤ ${files.gzipBytes}`)
})

test('a build without the app stops the start with what to do', () => {
  assert.throws(() => new AppFiles('/nonexistent/app'), /index\.html is missing: run "npm run build", or set SERVE_APP=off/)
  assert.ok(new AppFiles(APP_DIR).gzipBytes > 0)
})

// what is sent as gzip is the file
test('the gzip form of a file is the file', () => {
  const files = new AppFiles(APP_DIR)
  const reply = files.reply('', undefined, 'gzip')
  assert.is(reply.headers!['content-encoding'], 'gzip')
  assert.match(gunzipSync(reply.body as Buffer).toString('utf8'), /^<!doctype html>/)
})

test.run()

// With APP_URL pointing elsewhere the app is still served, unless turned off
const elsewhere = serverSuite('web app files: APP_URL elsewhere', { APP_URL: 'https://app.example.org' })

elsewhere('with APP_URL elsewhere, / goes there and /app/ is still served', async ({ srv }) => {
  assert.is((await call(srv.url, 'GET', '/')).headers.get('location'), 'https://app.example.org/')
  assert.is((await call(srv.url, 'GET', '/app/')).status, 200)
})

elsewhere.run()

const off = serverSuite('web app files: SERVE_APP=off', { APP_URL: 'https://app.example.org', SERVE_APP: 'off' })

off('with SERVE_APP=off, /app, /app/ and its files are 404 ROUTE_NOT_FOUND', async ({ srv }) => {
  for (const path of ['/app', '/app/', '/app/links', '/app/assets/x.js']) {
    const res = await call(srv.url, 'GET', path)
    assert.equal([res.status, res.body.code], [404, 'ROUTE_NOT_FOUND'], path)
  }
  assert.is(srv.service.deps.appFiles, undefined)
  assert.is((await call(srv.url, 'GET', '/')).headers.get('location'), 'https://app.example.org/')
})

off.run()
