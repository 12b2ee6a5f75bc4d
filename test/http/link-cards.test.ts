// Preview cards (issue 25): a link's optional title, description and image_url are shown to the
// link-preview fetchers of one list (src/links/preview-fetchers.ts) as Open Graph and Twitter
// card tags on a noindex page; every other client gets the 302. Nothing is fetched from the target.
import * as assert from 'uvu/assert'
import { assertFieldErrors, call, newUser, type User } from '../helpers/api.js'
import { serverSuite, type TestServer } from '../helpers/server.js'
import { PREVIEW_FETCHERS } from '../../src/links/preview-fetchers.js'

const SLACK = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)'
const CURL = 'curl/8.5.0'
const create = (srv: TestServer, token: string, body: unknown) => call(srv.url, 'POST', '/api/v1/links', { token, body })
const as = (srv: TestServer, code: string, userAgent: string, method = 'GET') => call(srv.url, method, `/r/${code}`, { headers: { 'user-agent': userAgent } })

const test = serverSuite<{ user: User }>('preview cards')
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('title (1-200), description (1-500) and image_url (https) are taken, returned, changed and cleared', async ({ srv, user }) => {
  const url = 'https://example.com/'
  assertFieldErrors(await create(srv, user.token, { url, title: 'x'.repeat(201) }), [['title', 'TOO_LONG']])
  assertFieldErrors(await create(srv, user.token, { url, description: 'x'.repeat(501) }), [['description', 'TOO_LONG']])
  assertFieldErrors(await create(srv, user.token, { url, image_url: 'http://img.example/a.png' }), [['image_url', 'INVALID']])
  assertFieldErrors(await create(srv, user.token, { url, image_url: 'not a url' }), [['image_url', 'INVALID']])
  const res = await create(srv, user.token, { url, title: 'x'.repeat(200), description: 'd'.repeat(500), image_url: 'https://img.example/a.png' })
  assert.is(res.status, 201, res.text)
  assert.equal([res.body.title.length, res.body.description.length, res.body.image_url], [200, 500, 'https://img.example/a.png'])
  const changed = await call(srv.url, 'PATCH', `/api/v1/links/${res.body.code}`, { token: user.token, body: { title: 'New', image_url: null } })
  assert.equal([changed.status, changed.body.title, changed.body.description.length, changed.body.image_url], [200, 'New', 500, null])
})

test('Slackbot gets the card: Open Graph and Twitter tags, noindex, every value escaped; curl gets the 302', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: 'https://example.com/launch', title: 'Our <launch> & "party"', description: "Come <b>along</b>, it's free", image_url: 'https://img.example/p.png?a=1&b=2' })
  const code = res.body.code
  const card = await as(srv, code, SLACK)
  assert.is(card.status, 200)
  assert.match(card.headers.get('content-type') ?? '', /^text\/html/)
  assert.is(card.headers.get('x-robots-tag'), 'noindex')
  assert.match(card.text, /<meta name="robots" content="noindex">/)
  assert.match(card.text, /<meta property="og:title" content="Our &lt;launch&gt; &amp; &quot;party&quot;">/)
  assert.match(card.text, /<meta property="og:description" content="Come &lt;b&gt;along&lt;\/b&gt;, it&#39;s free">/)
  assert.match(card.text, /<meta property="og:image" content="https:\/\/img\.example\/p\.png\?a=1&amp;b=2">/)
  assert.match(card.text, new RegExp(`<meta property="og:url" content="${srv.service.deps.baseUrl}/r/${code}">`))
  assert.match(card.text, /<meta name="twitter:card" content="summary_large_image">/)
  assert.match(card.text, /<meta name="twitter:title" content="Our &lt;launch&gt;/)
  assert.not.match(card.text, /<b>|<launch>|<script/)
  const curl = await as(srv, code, CURL)
  assert.equal([curl.status, curl.headers.get('location')], [302, 'https://example.com/launch'])
  // the card is no visit; the 302 is one
  await srv.service.deps.visits.flush()
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })).body.visits, 1)
})

test('every fetcher of the list gets the card; a link without a card redirects them all', async ({ srv, user }) => {
  const withCard = (await create(srv, user.token, { url: 'https://example.com/c', description: 'Only a description' })).body.code
  const plain = (await create(srv, user.token, { url: 'https://example.com/p' })).body.code
  for (const name of PREVIEW_FETCHERS) {
    const ua = `Mozilla/5.0 (compatible; ${name}/1.0)`
    const card = await as(srv, withCard, ua)
    assert.is(card.status, 200, name)
    assert.match(card.text, /<meta name="twitter:card" content="summary">/, name)
    assert.is((await as(srv, plain, ua)).status, 302, name)
  }
})

test('a card is not shown for a link with a password: the fetcher is asked for it like anyone', async ({ srv, user }) => {
  const code = (await create(srv, user.token, { url: 'https://example.com/s', title: 'Secret', password: 'open sesame' })).body.code
  const res = await as(srv, code, SLACK)
  assert.is(res.status, 401)
  assert.not.match(res.text, /Secret/)
})

test.run()
