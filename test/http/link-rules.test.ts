// Redirect rules (issue 25): up to 10 ordered rules per link, each { if: { device?, language?,
// country? }, url }. The first rule whose conditions all match gives the target; the link's url
// is the fallback. Rules live in the cache entry and reach every node through the change feed.
import * as assert from 'uvu/assert'
import { assertFieldErrors, call, newUser, uniqueName, type User } from '../helpers/api.js'
import { feedSettled, serverSuite, twoNodeSuite, type TestServer } from '../helpers/server.js'
import { blockHost, unblockHost } from '../../src/admin/blocks.js'

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
const ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Mobile Safari/537.36'
const DESKTOP = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36'
const FALLBACK = 'https://example.com/fallback'

const create = (srv: TestServer, token: string, body: unknown) => call(srv.url, 'POST', '/api/v1/links', { token, body })
const patch = (srv: TestServer, token: string, code: string, body: unknown) => call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token, body })
/** Where a GET of the link sends these headers (from this address), twice: the miss, then the cached hit. */
async function targetsOf(srv: TestServer, code: string, headers: Record<string, string>, ip?: string): Promise<string[]> {
  const out: string[] = []
  for (let i = 0; i < 2; i++) {
    const res = await call(srv.url, 'GET', `/r/${code}`, { headers, ...(ip === undefined ? {} : { ip }) })
    assert.is(res.status, 302, res.text)
    out.push(res.headers.get('location')!)
  }
  return out
}
const twice = (url: string) => [url, url]

const test = serverSuite<{ user: User }>('redirect rules')
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('a device rule sends an iPhone to the ios target and a desktop to the fallback', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: FALLBACK, rules: [{ if: { device: 'ios' }, url: 'https://apps.apple.com/app/x' }, { if: { device: 'android' }, url: 'https://play.google.com/store/apps/x' }] })
  assert.is(res.status, 201, res.text)
  assert.equal(res.body.rules, [{ if: { device: 'ios' }, url: 'https://apps.apple.com/app/x' }, { if: { device: 'android' }, url: 'https://play.google.com/store/apps/x' }])
  const code = res.body.code
  assert.equal(await targetsOf(srv, code, { 'user-agent': IPHONE }), twice('https://apps.apple.com/app/x'))
  assert.equal(await targetsOf(srv, code, { 'user-agent': ANDROID }), twice('https://play.google.com/store/apps/x'))
  assert.equal(await targetsOf(srv, code, { 'user-agent': DESKTOP }), twice(FALLBACK))
  assert.equal(await targetsOf(srv, code, {}), twice(FALLBACK), 'no User-Agent matches no device')
  // through the general path (an Origin header) too
  assert.equal(await targetsOf(srv, code, { 'user-agent': IPHONE, origin: 'https://elsewhere.example' }), twice('https://apps.apple.com/app/x'))
})

test('a language rule matches the primary tag of the highest-q Accept-Language entry; the first matching rule wins', async ({ srv, user }) => {
  const rules = [{ if: { language: 'de', device: 'desktop' }, url: 'https://example.com/de-desktop' }, { if: { language: 'DE' }, url: 'https://example.com/de' }, { if: { language: 'fr' }, url: 'https://example.com/fr' }]
  const res = await create(srv, user.token, { url: FALLBACK, rules })
  assert.is(res.status, 201, res.text)
  assert.is(res.body.rules[1].if.language, 'de', 'kept in lower case')
  const code = res.body.code
  assert.equal(await targetsOf(srv, code, { 'accept-language': 'de-CH, en;q=0.5', 'user-agent': IPHONE }), twice('https://example.com/de'))
  assert.equal(await targetsOf(srv, code, { 'accept-language': 'de-AT', 'user-agent': DESKTOP }), twice('https://example.com/de-desktop'))
  assert.equal(await targetsOf(srv, code, { 'accept-language': 'en;q=0.4, fr-FR;q=0.9, de;q=0.8' }), twice('https://example.com/fr'))
  assert.equal(await targetsOf(srv, code, { 'accept-language': 'en-GB,en;q=0.9,de;q=0.8' }), twice(FALLBACK))
  assert.equal(await targetsOf(srv, code, {}), twice(FALLBACK))
})

// 8.8.8.0/24 is Google's public resolver: the bundled ip-location-db database places it in the US
// (as the statistics tests use it); the test server trusts 127.0.0.1 as its proxy.
test('a country rule matches the client address’s country; an unplaceable address gets the fallback', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: FALLBACK, rules: [{ if: { country: 'us' }, url: 'https://example.com/us' }] })
  assert.is(res.status, 201, res.text)
  assert.equal(res.body.rules, [{ if: { country: 'US' }, url: 'https://example.com/us' }])
  assert.equal(await targetsOf(srv, res.body.code, {}, '8.8.8.8'), twice('https://example.com/us'))
  assert.equal(await targetsOf(srv, res.body.code, {}, '192.0.2.7'), twice(FALLBACK))
})

test('rules are checked: at most 10, a known condition at least, each url by the url rules under its own field path', async ({ srv, user }) => {
  const rule = { if: { device: 'ios' }, url: 'https://example.com/a' }
  assertFieldErrors(await create(srv, user.token, { url: FALLBACK, rules: Array(11).fill(rule) }), [['rules', 'TOO_LONG']])
  assertFieldErrors(await create(srv, user.token, { url: FALLBACK, rules: 'ios' }), [['rules', 'TYPE']])
  assertFieldErrors(await create(srv, user.token, { url: FALLBACK, rules: [rule, 'x'] }), [['rules[1]', 'TYPE']])
  assertFieldErrors(await create(srv, user.token, { url: FALLBACK, rules: [rule, rule, { if: {}, url: 'https://example.com/' }] }), [['rules[2].if', 'REQUIRED']])
  assertFieldErrors(await create(srv, user.token, { url: FALLBACK, rules: [{ url: 'https://example.com/' }] }), [['rules[0].if', 'REQUIRED']])
  assertFieldErrors(await create(srv, user.token, { url: FALLBACK, rules: [rule, rule, { if: { device: 'ios' }, url: 'javascript:alert(1)' }] }), [['rules[2].url', 'INVALID']])
  assertFieldErrors(await create(srv, user.token, { url: FALLBACK, rules: [{ if: { device: 'ios' } }] }), [['rules[0].url', 'REQUIRED']])
  assertFieldErrors(await create(srv, user.token, { url: FALLBACK, rules: [{ if: { device: 'ios' }, url: `https://example.com/${'a'.repeat(4096)}` }] }), [['rules[0].url', 'TOO_LONG']])
  assertFieldErrors(
    await create(srv, user.token, { url: FALLBACK, rules: [{ if: { device: 'windows', language: 'english', country: 'USA', os: 'x' }, url: 'https://example.com/' }] }),
    [['rules[0].if.device', 'INVALID'], ['rules[0].if.language', 'INVALID'], ['rules[0].if.country', 'INVALID'], ['rules[0].if.os', 'INVALID']],
  )
  assertFieldErrors(await create(srv, user.token, { url: FALLBACK, rules: [{ if: { device: 'ios' }, url: `${srv.service.deps.baseUrl}/r/abcdefgh` }] }), [['rules[0].url', 'INVALID']])
  // a bulk create takes none
  const bulk = await call(srv.url, 'POST', '/api/v1/links/bulk', { token: user.token, body: { items: [{ url: FALLBACK, rules: [rule] }] } })
  assert.equal([bulk.status, bulk.body.results[0].status, bulk.body.results[0].error.errors[0].field], [200, 422, 'rules'])
})

test('PATCH replaces the rules; null or [] removes them, and the link redirects as a plain one', async ({ srv, user }) => {
  const code = (await create(srv, user.token, { url: FALLBACK, rules: [{ if: { device: 'ios' }, url: 'https://example.com/ios' }] })).body.code
  assert.equal(await targetsOf(srv, code, { 'user-agent': IPHONE }), twice('https://example.com/ios'))
  const changed = await patch(srv, user.token, code, { rules: [{ if: { device: 'desktop' }, url: 'https://example.com/desk' }] })
  assert.equal([changed.status, changed.body.rules], [200, [{ if: { device: 'desktop' }, url: 'https://example.com/desk' }]])
  assert.equal(await targetsOf(srv, code, { 'user-agent': IPHONE }), twice(FALLBACK))
  assert.equal(await targetsOf(srv, code, { 'user-agent': DESKTOP }), twice('https://example.com/desk'))
  assert.equal((await patch(srv, user.token, code, { tags: ['kept'] })).body.rules.length, 1, 'a PATCH without rules keeps them')
  assertFieldErrors(await patch(srv, user.token, code, { rules: [{ if: { device: 'ios' }, url: 'nope' }] }), [['rules[0].url', 'INVALID']])
  for (const none of [null, []]) {
    await patch(srv, user.token, code, { rules: [{ if: { device: 'desktop' }, url: 'https://example.com/desk' }] })
    const cleared = await patch(srv, user.token, code, { rules: none })
    assert.equal([cleared.status, cleared.body.rules], [200, []])
    assert.equal(await targetsOf(srv, code, { 'user-agent': DESKTOP }), twice(FALLBACK))
    const entry = srv.service.deps.cache.get(code)
    assert.type(entry, 'string', `no rules: the plain cache entry (${JSON.stringify(entry)})`)
  }
  assert.equal((await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })).body.rules, [])
})

test('a rule target on the block list is refused as the link’s url is, naming its field', async ({ srv, user }) => {
  await blockHost(srv.service.db.sql, 'rules-blocked.example')
  const rules = [{ if: { device: 'ios' }, url: 'https://ok.example/' }, { if: { device: 'android' }, url: 'https://www.rules-blocked.example/x' }]
  const res = await create(srv, user.token, { url: FALLBACK, rules })
  assert.equal([res.status, res.body.code, res.body.errors], [422, 'URL_BLOCKED', [{ field: 'rules[1].url', code: 'INVALID', message: 'its host is blocked' }]])
  const code = (await create(srv, user.token, { url: FALLBACK })).body.code
  const refused = await patch(srv, user.token, code, { rules })
  assert.equal([refused.status, refused.body.code, refused.body.errors[0].field], [422, 'URL_BLOCKED', 'rules[1].url'])
  assert.equal((await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })).body.rules, [], 'nothing was changed')
})

test('a password link with rules asks first, then follows the rules', async ({ srv, user }) => {
  const code = (await create(srv, user.token, { url: FALLBACK, password: 'correct horse', rules: [{ if: { device: 'ios' }, url: 'https://example.com/ios' }] })).body.code
  assert.is((await call(srv.url, 'GET', `/r/${code}`, { headers: { 'user-agent': IPHONE } })).status, 401)
  const res = await call(srv.url, 'POST', `/r/${code}/unlock`, { headers: { 'user-agent': IPHONE }, body: { password: 'correct horse' } })
  assert.equal([res.status, res.headers.get('location')], [302, 'https://example.com/ios'])
})

test.run()

// With the destination checks on (the default): a rule target on the block list is the block
// list's to stop, so new rules start the link again at once, not after a check.
const listedLater = serverSuite<{ user: User }>('redirect rules and a later block-list entry')
listedLater.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

listedLater('a rule target listed after the rule was saved stops the whole link (410, disabled), as a listed url does; new rules bring it back', async ({ srv, user }) => {
  const host = `${uniqueName('later')}.example`
  const res = await create(srv, user.token, { url: FALLBACK, rules: [{ if: { device: 'ios' }, url: `https://login.${host}/x` }] })
  assert.is(res.status, 201, res.text)
  const code = res.body.code
  assert.equal(await targetsOf(srv, code, { 'user-agent': DESKTOP }), twice(FALLBACK)) // cached
  await blockHost(srv.service.db.sql, host)
  srv.service.deps.cache.clear() // what the block list's notice does on every node
  for (const ua of [IPHONE, DESKTOP]) {
    const gone = await call(srv.url, 'GET', `/r/${code}`, { headers: { 'user-agent': ua } })
    assert.equal([gone.status, gone.body.code], [410, 'LINK_DISABLED'], ua)
  }
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })).body.disabled, true)
  const mended = await patch(srv, user.token, code, { rules: [{ if: { device: 'ios' }, url: 'https://apps.apple.com/app/x' }] })
  assert.equal([mended.status, mended.body.disabled], [200, false], mended.text)
  assert.equal(await targetsOf(srv, code, { 'user-agent': IPHONE }), twice('https://apps.apple.com/app/x'))
  await unblockHost(srv.service.db.sql, host)
})

listedLater.run()

if (process.env.DATABASE_URL !== undefined) {
  const nodes = twoNodeSuite('redirect rules on two nodes')
  nodes('a PATCH of the rules on one node changes where another node’s cached link sends', async ({ a, b }) => {
    const user = await newUser(a.url)
    const code = (await create(a, user.token, { url: FALLBACK, rules: [{ if: { device: 'ios' }, url: 'https://example.com/ios' }] })).body.code
    assert.equal(await targetsOf(b, code, { 'user-agent': IPHONE }), twice('https://example.com/ios'))
    assert.ok(b.service.deps.cache.get(code) !== undefined, 'node B has it cached')
    assert.is((await patch(a, user.token, code, { rules: [{ if: { device: 'ios' }, url: 'https://example.com/ios-2' }] })).status, 200)
    await feedSettled(b)
    assert.equal(await targetsOf(b, code, { 'user-agent': IPHONE }), twice('https://example.com/ios-2'))
    assert.is((await patch(a, user.token, code, { rules: null })).status, 200)
    await feedSettled(b)
    assert.equal(await targetsOf(b, code, { 'user-agent': IPHONE }), twice(FALLBACK))
  })
  nodes.run()
}
