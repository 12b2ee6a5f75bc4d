// Pages for people: a browser (Accept preferring text/html) that opens a short link that does not
// redirect gets a small HTML page with the same status, no script and a strict CSP; anything else
// keeps the JSON of the contract. /r/{code}/preview shows a working link's destination.
import * as assert from 'uvu/assert'
import { blockHost, unblockHost } from '../../src/admin/blocks.js'
import { disableLink } from '../../src/admin/links.js'
import { call, newLink, newUser, uniqueName, type User } from '../helpers/api.js'
import { feedSettled, serverSuite, type TestServer } from '../helpers/server.js'

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8'
const asBrowser = (srv: TestServer, path: string, extra: Record<string, string> = {}) => call(srv.url, 'GET', path, { headers: { accept: BROWSER, ...extra } })

/** What every page must be: HTML with the status given, no script, the strict CSP, not cached. */
function assertPage(res: Awaited<ReturnType<typeof call>>, status: number): void {
  assert.is(res.status, status)
  assert.match(res.headers.get('content-type') ?? '', /^text\/html; charset=utf-8$/)
  assert.match(res.headers.get('content-security-policy') ?? '', /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/)
  assert.is(res.headers.get('cache-control'), 'no-store')
  assert.match(res.headers.get('x-request-id') ?? '', /./)
  assert.not.match(res.text, /<script|\son[a-z]+=|javascript:/i)
  // Nothing is fetched from anywhere: no image, stylesheet, font or frame by URL.
  assert.not.match(res.text, /<(img|link|iframe|object|embed)\b|url\(/i)
}

const test = serverSuite<{ user: User }>('pages for people at /r/{code}')
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('an unknown code: a browser gets a 404 page offering to report a link; curl and API clients get the JSON', async ({ srv }) => {
  const page = await asBrowser(srv, '/r/Zz9Zz9Zz')
  assertPage(page, 404)
  assert.match(page.text, /This short link does not exist/)
  assert.match(page.text, new RegExp(`href="${srv.service.deps.baseUrl}/app/report"`))
  for (const accept of [undefined, '*/*', 'application/json']) {
    const res = await call(srv.url, 'GET', '/r/Zz9Zz9Zz', { headers: accept === undefined ? {} : { accept } })
    assert.equal([res.status, res.body?.code, res.headers.get('vary')], [404, 'LINK_NOT_FOUND', 'Accept'], String(accept))
  }
  assert.is(page.headers.get('vary'), 'Accept, Accept-Language', 'the two answers differ by Accept, the page by language too: caches are told')
  assertPage(await asBrowser(srv, '/r/short'), 404) // a malformed code, on the general path
})

test('a disabled link: 410 page in plain words with a report link; the JSON 410 for curl, from the cache too', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token, 'https://stopped.example/secret-path')
  await disableLink(srv.service.db.sql, link.code, 'phishing')
  await feedSettled(srv)
  srv.service.deps.cache.invalidate(link.code)
  const json = await call(srv.url, 'GET', `/r/${link.code}`) // now cached as stopped
  assert.equal([json.status, json.body.code], [410, 'LINK_DISABLED'])
  const page = await asBrowser(srv, `/r/${link.code}`)
  assertPage(page, 410)
  assert.match(page.text, /This short link has been disabled/)
  assert.match(page.text, new RegExp(`href="${srv.service.deps.baseUrl}/app/report\\?code=${link.code}"`))
  assert.not.match(page.text, /stopped\.example|secret-path|phishing/, 'neither the destination nor the operator\'s reason')
  // HEAD: the same head, no body.
  const head = await fetch(`${srv.url}/r/${link.code}`, { method: 'HEAD', headers: { accept: BROWSER } })
  assert.equal([head.status, head.headers.get('content-type'), await head.text()], [410, 'text/html; charset=utf-8', ''])
})

test('a blocked destination: the page says it is listed as phishing or malware and never names or links it; on the general path too', async ({ srv, user }) => {
  const host = `${uniqueName('evil')}.example`
  const link = await newLink(srv.url, user.token, `https://login.${host}/account`)
  await blockHost(srv.service.db.sql, host)
  srv.service.deps.cache.clear()
  for (const extra of [{}, { origin: 'https://elsewhere.example' }] as Array<Record<string, string>>) {
    const page = await asBrowser(srv, `/r/${link.code}`, extra)
    assertPage(page, 410)
    assert.match(page.text, /leads to a dangerous site/)
    assert.match(page.text, /listed as phishing or malware/)
    assert.not.ok(page.text.includes(host), 'the blocked host is nowhere on the page')
  }
  await unblockHost(srv.service.db.sql, host)
})

test('an expired link and a link suspended by reports have their own pages', async ({ srv, user }) => {
  const expiring = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/', expires_at: new Date(Date.now() + 1_500).toISOString() } })
  await new Promise((r) => setTimeout(r, 1_600))
  const expired = await asBrowser(srv, `/r/${expiring.body.code}`)
  assertPage(expired, 410)
  assert.match(expired.text, /This short link has expired/)
  const reported = await newLink(srv.url, user.token)
  await srv.service.db.sql`update links set suspended_at = now() where code = ${reported.code}`
  srv.service.deps.cache.invalidate(reported.code)
  const suspended = await asBrowser(srv, `/r/${reported.code}`)
  assertPage(suspended, 410)
  assert.match(suspended.text, /is suspended/)
})

test('the preview shows a working link\'s destination and host (Unicode and punycode), does not redirect and counts no visit', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token, 'https://bücher.example/neu?x=<b>')
  for (const accept of [BROWSER, '*/*']) {
    const page = await call(srv.url, 'GET', `/r/${link.code}/preview`, { headers: { accept } })
    assertPage(page, 200)
    assert.match(page.text, /Where this short link leads/)
    assert.match(page.text, /href="https:\/\/bücher\.example\/neu\?x=&lt;b&gt;"/)
    assert.match(page.text, /bücher\.example <span class="muted">\(punycode <span class="url">xn--bcher-kva\.example<\/span>\)/)
  }
  await new Promise((r) => setTimeout(r, 1_200)) // a flush of counted visits
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })).body.visits, 0)
  // A link that does not redirect: its page for a browser, its JSON otherwise.
  await disableLink(srv.service.db.sql, link.code, null)
  assertPage(await asBrowser(srv, `/r/${link.code}/preview`), 410)
  const json = await call(srv.url, 'GET', `/r/${link.code}/preview`)
  assert.equal([json.status, json.body.code], [410, 'LINK_DISABLED'])
  assert.equal((await call(srv.url, 'GET', '/r/Zz9Zz9Zz/preview')).body.code, 'LINK_NOT_FOUND')
  assertPage(await asBrowser(srv, '/r/Zz9Zz9Zz/preview'), 404)
})

test('a page speaks the visitor\'s language: German, Arabic right to left, English otherwise; Vary and Content-Language say so', async ({ srv }) => {
  for (const [header, lang, dir, title] of [
    ['de-DE,de;q=0.9,en;q=0.8', 'de', 'ltr', 'Diesen Kurzlink gibt es nicht'],
    ['ar', 'ar', 'rtl', 'هذا الرابط المختصر غير موجود'],
    ['fr-CA, en;q=0.5', 'fr', 'ltr', 'Ce lien court n’existe pas'],
    ['pt-BR, zh;q=0.8', 'en', 'ltr', 'This short link does not exist'],
    [undefined, 'en', 'ltr', 'This short link does not exist'],
  ] as Array<[string | undefined, string, string, string]>) {
    const page = await asBrowser(srv, '/r/Zz9Zz9Zz', header === undefined ? {} : { 'accept-language': header })
    assertPage(page, 404)
    assert.match(page.text, new RegExp(`<html lang="${lang}" dir="${dir}">`), String(header))
    assert.ok(page.text.includes(`<h1>${title}</h1>`), `${header}: ${title}`)
    assert.is(page.headers.get('content-language'), lang)
    assert.is(page.headers.get('vary'), 'Accept, Accept-Language')
  }
})

test('the password form, the preview and a stopped link\'s page in German, from the cache too; the API\'s JSON stays English', async ({ srv, user }) => {
  const de = { 'accept-language': 'de-CH, de;q=0.9' }
  const locked = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/locked', password: 'open sesame please' } })
  for (let i = 0; i < 2; i++) {
    const page = await asBrowser(srv, `/r/${locked.body.code}`, de) // the second from the cache
    assert.is(page.status, 401)
    assert.match(page.text, /<html lang="de" dir="ltr">/)
    assert.match(page.text, /Dieser Kurzlink ist geschützt/)
    assert.match(page.text, /<button class="button primary" type="submit">Link öffnen<\/button>/)
    assert.is(page.headers.get('content-language'), 'de')
  }
  const wrong = await fetch(`${srv.url}/r/${locked.body.code}/unlock`, { method: 'POST', headers: { accept: BROWSER, 'content-type': 'application/x-www-form-urlencoded', ...de }, body: 'password=nope' })
  assert.is(wrong.status, 401)
  assert.match(await wrong.text(), /Das Passwort stimmt nicht/)
  const link = await newLink(srv.url, user.token, 'https://example.com/open')
  const preview = await asBrowser(srv, `/r/${link.code}/preview`, de)
  assert.is(preview.status, 200)
  assert.match(preview.text, /Wohin dieser Kurzlink führt/)
  assert.match(preview.text, /<span>Weiter zu <bdi>example\.com<\/bdi><\/span>/)
  await disableLink(srv.service.db.sql, link.code, 'spam')
  await feedSettled(srv)
  srv.service.deps.cache.invalidate(link.code)
  const stopped = await asBrowser(srv, `/r/${link.code}`, { 'accept-language': 'ar' })
  assertPage(stopped, 410)
  assert.match(stopped.text, /<html lang="ar" dir="rtl">/)
  assert.match(stopped.text, /تم تعطيل هذا الرابط المختصر/)
  // API error messages are for developers: English whatever the language asked
  const json = await call(srv.url, 'GET', `/r/${link.code}`, { headers: de })
  assert.equal([json.status, json.body.code, json.headers.get('content-language'), json.headers.get('vary')], [410, 'LINK_DISABLED', null, 'Accept'])
  assert.match(json.body.message, /^[\x20-\x7e]+$/)
})

test('a redirect does not depend on the language: no Content-Language, no Vary on it', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token, 'https://example.com/plain')
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${srv.url}/r/${link.code}`, { redirect: 'manual', headers: { accept: BROWSER, 'accept-language': 'ar' } })
    assert.equal([res.status, res.headers.get('content-language'), res.headers.get('vary')], [302, null, null])
  }
})

test.run()
