// Pages for people (src/web/visitor-pages.ts) and the Accept negotiation that picks them.
import { createHash } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { prefersHtml } from '../../src/http/accept.js'
import { escapeHtml, PAGE_CSP, previewPage, stoppedPage } from '../../src/web/visitor-pages.js'

test('HTML is chosen only when Accept prefers it: browsers yes; curl, */*, JSON clients and no Accept no', () => {
  assert.ok(prefersHtml('text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8'))
  assert.ok(prefersHtml('text/*'))
  assert.ok(prefersHtml('application/json;q=0.5, text/html'))
  for (const accept of [undefined, '', '*/*', 'application/json', 'text/html;q=0.5, application/json', 'text/html, application/json', 'text/html;q=0', 'image/png']) {
    assert.not.ok(prefersHtml(accept), String(accept))
  }
})

test('every value is escaped: a url or code with markup stays text', () => {
  assert.is(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;')
  const html = previewPage('aZ3kP9qR', 'https://sho.rt/r/aZ3kP9qR', 'https://example.com/?q="><script>alert(1)</script>', 'https://sho.rt/app/report?code=aZ3kP9qR')
  assert.not.match(html, /<script/)
  assert.match(html, /&lt;script&gt;/)
})

test('no script anywhere, and the CSP allows exactly the inline stylesheet, by its hash', () => {
  const { html } = stoppedPage('blocked', 'aZ3kP9qR', '/app/report?code=aZ3kP9qR')
  assert.not.match(html, /<script|\son[a-z]+=|javascript:/i)
  const style = /<style>([\s\S]*)<\/style>/.exec(html)![1]!
  assert.ok(PAGE_CSP.includes(`'sha256-${createHash('sha256').update(style).digest('base64')}'`))
  assert.match(PAGE_CSP, /^default-src 'none'; /)
})

test('each stopped kind has its status and plain words; a blocked destination is named as phishing or malware', () => {
  assert.is(stoppedPage('unknown', 'aZ3kP9qR', '/r').status, 404)
  for (const kind of ['expired', 'disabled', 'suspended', 'blocked'] as const) assert.is(stoppedPage(kind, 'aZ3kP9qR', '/r').status, 410, kind)
  assert.match(stoppedPage('blocked', 'aZ3kP9qR', '/r').html, /listed as phishing or malware/)
  assert.match(stoppedPage('disabled', 'aZ3kP9qR', '/app/report?code=aZ3kP9qR').html, /<a href="\/app\/report\?code=aZ3kP9qR">report this link<\/a>/)
})

test('the preview shows the host in Unicode and punycode when they differ', () => {
  const html = previewPage('aZ3kP9qR', 'https://sho.rt/r/aZ3kP9qR', 'https://xn--80ak6aa92e.example/login', '/r')
  assert.match(html, /аррӏе\.example <span class="muted">\(punycode <span class="url">xn--80ak6aa92e\.example<\/span>\)/)
})

test.run()
