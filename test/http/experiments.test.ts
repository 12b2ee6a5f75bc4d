// Experiments: weighted variants chosen per visitor and day without a cookie, click ids (ls_cid)
// that report a conversion once at /c/{id}, and per-variant results with a winner stated with
// its confidence; a confident winner promoted when the owner asks for it.
import * as assert from 'uvu/assert'
import { assertError, assertFieldErrors, call, newUser, uniqueName, type User } from '../helpers/api.js'
import { blockHost, unblockHost } from '../../src/admin/blocks.js'
import { Receiver } from '../helpers/receiver.js'
import { serverSuite, type TestServer } from '../helpers/server.js'
import { until } from '../helpers/wait.js'
import { newClickId } from '../../src/experiments/click-id.js'

const ENV = {
  VISIT_FLUSH_MS: '60000', // only the test's own flushes
  WEBHOOK_ALLOW_HTTP: 'on',
  WEBHOOK_ALLOW_PRIVATE: 'on',
  WEBHOOK_POLL_MS: '200',
}
const A = 'https://example.com/a'
const B = 'https://example.com/b'
const DAY_MS = 86_400_000
const UA = (i: number) => `Mozilla/5.0 (X11; Linux x86_64; visitor ${i}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36`
/** The i-th simulated visitor: its own address (through the trusted proxy) and User-Agent. */
const visitor = (i: number) => ({ ip: `10.36.${i >> 8}.${i & 255}`, headers: { 'user-agent': UA(i) } })

const create = (srv: TestServer, token: string, body: unknown) => call(srv.url, 'POST', '/api/v1/links', { token, body })
/** Flushes what the redirects counted, then looks for winners to promote. */
const flush = async (srv: TestServer) => {
  await srv.service.deps.visits.flush()
  await srv.service.deps.experiments.flush()
}

/** Where each visitor is sent: the variant's url (query removed) and the click id. */
async function visit(srv: TestServer, code: string, i: number): Promise<{ target: string; cid: string | null }> {
  const res = await call(srv.url, 'GET', `/r/${code}`, visitor(i))
  assert.is(res.status, 302, res.text)
  const location = new URL(res.headers.get('location')!)
  const cid = location.searchParams.get('ls_cid')
  location.search = ''
  return { target: location.toString(), cid }
}

const test = serverSuite<{ user: User }>('experiments', ENV)
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('variants, conversions and promote_winner are created, shown and changed with the link', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: 'https://example.com/', variants: [{ url: A, weight: 30 }, { url: B, weight: 70 }], conversions: true })
  assert.is(res.status, 201, res.text)
  assert.equal(res.body.variants, [{ url: A, weight: 30 }, { url: B, weight: 70 }])
  assert.is(res.body.conversions, true)
  assert.is(res.body.promote_winner, false)
  const code = res.body.code
  const got = await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })
  assert.equal(got.body.variants, res.body.variants)
  const patched = await call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token: user.token, body: { promote_winner: true } })
  assert.is(patched.status, 200, patched.text)
  assert.equal([patched.body.variants, patched.body.conversions, patched.body.promote_winner], [res.body.variants, true, true], 'a flag alone changes only itself')
  const cleared = await call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token: user.token, body: { variants: null, conversions: false } })
  assert.equal([cleared.body.variants, cleared.body.conversions], [[], false])
  const plain = await create(srv, user.token, { url: 'https://example.com/' })
  assert.equal([plain.body.variants, plain.body.conversions, plain.body.promote_winner], [[], false, false])
})

test('each variant url is checked as the link url is; 2 to 10 variants, weights 1 to 100', async ({ srv, user }) => {
  const bad = await create(srv, user.token, {
    url: 'https://example.com/',
    variants: [{ url: 'ftp://example.com/x', weight: 50 }, { url: A, weight: 0 }, { url: B, weight: 1.5 }, { url: A }, { url: A, weight: 5, extra: 1 }],
  })
  assertFieldErrors(bad, [['variants[0].url', 'INVALID'], ['variants[1].weight', 'INVALID'], ['variants[2].weight', 'TYPE'], ['variants[3].weight', 'REQUIRED'], ['variants[4].extra', 'INVALID']])
  assertFieldErrors(await create(srv, user.token, { url: A, variants: [{ url: A, weight: 1 }] }), [['variants', 'TOO_SHORT']])
  assertFieldErrors(await create(srv, user.token, { url: A, variants: Array.from({ length: 11 }, () => ({ url: A, weight: 1 })) }), [['variants', 'TOO_LONG']])
  assertFieldErrors(await create(srv, user.token, { url: A, variants: 'x', conversions: 'yes' }), [['variants', 'TYPE'], ['conversions', 'TYPE']])
  // the own-link rule, on the variant's own field
  const link = await create(srv, user.token, { url: A })
  const own = await create(srv, user.token, { url: A, variants: [{ url: A, weight: 1 }, { url: link.body.short_url, weight: 1 }] })
  assertFieldErrors(own, [['variants[1].url', 'INVALID']])
})

test('a variant on the block list is refused (422 URL_BLOCKED naming it); one listed later pauses the variants: everyone gets the url', async ({ srv, user }) => {
  const host = `${uniqueName('variant')}.example`
  await blockHost(srv.service.db.sql, host)
  const refused = await create(srv, user.token, { url: A, variants: [{ url: B, weight: 1 }, { url: `https://${host}/x`, weight: 1 }] })
  assert.equal([refused.status, refused.body.code, refused.body.errors], [422, 'URL_BLOCKED', [{ field: 'variants[1].url', code: 'INVALID', message: 'its host is blocked' }]])
  await unblockHost(srv.service.db.sql, host)
  const res = await create(srv, user.token, { url: 'https://example.com/default', variants: [{ url: `https://${host}/x`, weight: 99 }, { url: `https://${host}/y`, weight: 1 }] })
  assert.is(res.status, 201, res.text)
  const code = res.body.code
  assert.ok((await visit(srv, code, 7)).target.startsWith(`https://${host}/`))
  await blockHost(srv.service.db.sql, host)
  srv.service.deps.cache.clear() // what the block list's notice does on every node
  for (let i = 0; i < 5; i++) assert.is((await visit(srv, code, i)).target, 'https://example.com/default')
  const link = await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })
  assert.is(link.body.disabled, false, 'the link itself still works')
  await unblockHost(srv.service.db.sql, host)
})

test('new variant urls start the results afresh; new weights keep them', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: 'https://example.com/', variants: [{ url: A, weight: 50 }, { url: B, weight: 50 }] })
  const code = res.body.code
  for (let i = 0; i < 10; i++) await visit(srv, code, 2000 + i)
  await flush(srv)
  const visitsOf = async () => (await call(srv.url, 'GET', `/api/v1/links/${code}/stats`, { token: user.token })).body.variants.map((v: any) => v.visits)
  const before = await visitsOf()
  assert.is(before[0] + before[1], 10)
  const reweighed = await call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token: user.token, body: { variants: [{ url: A, weight: 10 }, { url: B, weight: 90 }] } })
  assert.is(reweighed.status, 200, reweighed.text)
  assert.equal(await visitsOf(), before)
  await call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token: user.token, body: { variants: [{ url: A, weight: 50 }, { url: 'https://example.com/c', weight: 50 }] } })
  assert.equal(await visitsOf(), [0, 0])
})

test('a bulk create takes no experiment', async ({ srv, user }) => {
  const res = await call(srv.url, 'POST', '/api/v1/links/bulk', { token: user.token, body: { items: [{ url: A, variants: [{ url: A, weight: 1 }, { url: B, weight: 1 }] }, { url: A, conversions: true }] } })
  assert.is(res.status, 200, res.text)
  assert.equal(res.body.results.map((r: any) => [r.status, r.error.errors[0].field]), [[422, 'variants'], [422, 'conversions']])
})

test('a matching rule wins over variants; HEAD gets the link url and no click id', async ({ srv, user }) => {
  const res = await create(srv, user.token, {
    url: 'https://example.com/default',
    rules: [{ if: { language: 'de' }, url: 'https://example.com/de' }],
    variants: [{ url: A, weight: 50 }, { url: B, weight: 50 }],
    conversions: true,
  })
  assert.is(res.status, 201, res.text)
  const code = res.body.code
  const de = await call(srv.url, 'GET', `/r/${code}`, { headers: { 'accept-language': 'de-DE' } })
  assert.is(de.headers.get('location'), 'https://example.com/de')
  const head = await call(srv.url, 'HEAD', `/r/${code}`)
  assert.is(head.status, 302)
  assert.is(head.headers.get('location'), 'https://example.com/default')
  const other = await call(srv.url, 'GET', `/r/${code}`)
  assert.match(other.headers.get('location')!, /^https:\/\/example\.com\/[ab]\?ls_cid=[A-Za-z0-9_-]{22}$/)
})

test('1,000 visitors split 20/30/50 within tolerance, and each keeps its variant', async ({ srv, user }) => {
  const urls = ['https://example.com/v0', 'https://example.com/v1', 'https://example.com/v2']
  const res = await create(srv, user.token, { url: 'https://example.com/', variants: urls.map((url, i) => ({ url, weight: [20, 30, 50][i] })) })
  const code = res.body.code
  const counts = [0, 0, 0]
  const first: string[] = []
  for (let i = 0; i < 1000; i++) {
    const { target, cid } = await visit(srv, code, i)
    assert.is(cid, null, 'no click id without conversions')
    first.push(target)
    counts[urls.indexOf(target)]!++
  }
  // expected 200/300/500; five standard deviations (13, 14.5, 16) either side
  assert.ok(Math.abs(counts[0]! - 200) <= 65 && Math.abs(counts[1]! - 300) <= 73 && Math.abs(counts[2]! - 500) <= 80, `split ${counts}`)
  for (let i = 0; i < 1000; i += 10) assert.is((await visit(srv, code, i)).target, first[i], `visitor ${i} came back`)
  // through the general path (an Origin header) too
  const again = await call(srv.url, 'GET', `/r/${code}`, { ...visitor(3), headers: { ...visitor(3).headers, origin: 'https://elsewhere.example' } })
  assert.is(again.headers.get('location'), first[3])
})

test('done when: 400 visitors on 50/50 with conversions, 40% and 5% converted (one id twice): exact counts, winner 0, confident', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: 'https://example.com/', variants: [{ url: A, weight: 50 }, { url: B, weight: 50 }], conversions: true })
  const code = res.body.code
  const byVariant: Array<Array<{ i: number; cid: string }>> = [[], []]
  for (let i = 0; i < 400; i++) {
    const { target, cid } = await visit(srv, code, i)
    assert.match(cid ?? '', /^[A-Za-z0-9_-]{22}$/, 'every Location carries ls_cid')
    byVariant[target === A ? 0 : 1]!.push({ i, cid: cid! })
  }
  for (const v of byVariant) assert.ok(v.length >= 140 && v.length <= 260, `split ${byVariant.map((x) => x.length)}`)
  // a repeat visitor: the same variant, a fresh click id
  const repeat = await visit(srv, code, byVariant[1]![0]!.i)
  assert.is(repeat.target, B)
  assert.is.not(repeat.cid, byVariant[1]![0]!.cid)
  const converting = [byVariant[0]!.slice(0, Math.round(byVariant[0]!.length * 0.4)), byVariant[1]!.slice(0, Math.round(byVariant[1]!.length * 0.05))]
  for (const [k, list] of converting.entries()) {
    for (const { i, cid } of list) {
      const r = await call(srv.url, k === 0 && i % 2 === 0 ? 'POST' : 'GET', `/c/${cid}`, visitor(i))
      assert.is(r.status, 204, r.text)
    }
  }
  const twice = converting[0]![0]!
  assert.is((await call(srv.url, 'GET', `/c/${twice.cid}`, visitor(twice.i))).status, 204, 'a repeat is answered, not counted')
  await flush(srv)
  const stats = await call(srv.url, 'GET', `/api/v1/links/${code}/stats`, { token: user.token })
  assert.is(stats.status, 200, stats.text)
  assert.equal(stats.body.variants.map((v: any) => v.conversions), converting.map((c) => c.length))
  assert.equal(stats.body.variants.map((v: any) => v.visits), [byVariant[0]!.length, byVariant[1]!.length + 1])
  stats.body.variants.forEach((v: any, k: number) => assert.ok(Math.abs(v.uniques - byVariant[k]!.length) <= byVariant[k]!.length * 0.1, `uniques ${v.uniques}`))
  assert.equal(stats.body.variants.map((v: any) => [v.url, v.weight]), [[A, 50], [B, 50]])
  assert.is(stats.body.experiment.winner, 0)
  assert.is(stats.body.experiment.confident, true)
  assert.ok(stats.body.experiment.p_value < 0.05)
  const csv = await call(srv.url, 'GET', `/api/v1/links/${code}/stats?format=csv`, { token: user.token })
  const [head, ...rows] = csv.text.trim().split('\r\n')
  const cols = head!.split(',')
  assert.ok(cols.includes('variant0:conversions') && cols.includes('variant1:visits'), head)
  const sum = (col: string) => rows.reduce((n, r) => n + Number(r.split(',')[cols.indexOf(col)]), 0)
  assert.equal([sum('variant0:conversions'), sum('variant1:conversions')], converting.map((c) => c.length))
})

test('a forged, altered, expired or malformed click id is 404 CLICK_ID_NOT_FOUND; an image request gets a GIF; CORS is open', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: A, conversions: true })
  const code = res.body.code
  const { cid } = await visit(srv, code, 1)
  assert.ok(cid !== null, 'conversions alone carry a click id on the url')
  const altered = cid!.slice(0, 10) + (cid![10] === 'A' ? 'B' : 'A') + cid!.slice(11)
  const secret = srv.service.deps.experiments.secret
  const today = Math.floor(Date.now() / DAY_MS)
  const expired = newClickId(secret, code, 0, today - 31)
  const otherLink = newClickId(secret, 'zzzzzzzz', 0, today)
  for (const id of ['x', Buffer.alloc(16).toString('base64url'), altered, expired, otherLink, `${cid}A`]) {
    assertError(await call(srv.url, 'GET', `/c/${id}`), 404, 'CLICK_ID_NOT_FOUND', id)
  }
  assert.is((await call(srv.url, 'HEAD', `/c/${cid}`)).status, 204, 'a HEAD is checked, and counts nothing')
  const img = await fetch(`${srv.url}/c/${cid}`, { headers: { accept: 'image/avif,image/webp,*/*', origin: 'https://shop.example', 'x-forwarded-for': '10.99.0.1' } })
  assert.is(img.status, 200)
  assert.is(img.headers.get('content-type'), 'image/gif')
  assert.is(img.headers.get('access-control-allow-origin'), '*')
  assert.is(Buffer.from(await img.arrayBuffer()).subarray(0, 6).toString(), 'GIF89a')
  const pre = await fetch(`${srv.url}/c/${cid}`, { method: 'OPTIONS', headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' } })
  assert.is(pre.status, 204)
  assert.is(pre.headers.get('access-control-allow-origin'), '*')
  // a bot is sent on, with a click id, but not counted for its variant
  const bot = await call(srv.url, 'GET', `/r/${code}`, { headers: { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' } })
  assert.match(bot.headers.get('location')!, /ls_cid=/)
  // a link without conversions takes none
  const off = await create(srv, user.token, { url: A })
  assertError(await call(srv.url, 'GET', `/c/${newClickId(secret, off.body.code, 0, today)}`), 404, 'CLICK_ID_NOT_FOUND')
  await flush(srv)
  const stats = await call(srv.url, 'GET', `/api/v1/links/${code}/stats`, { token: user.token })
  assert.equal(stats.body.variants, [{ url: A, weight: 100, visits: 1, uniques: 1, conversions: 1 }])
  assert.equal(stats.body.experiment, { winner: null, p_value: null, confident: false })
})

test('conversions are limited per address: 30 at once, then 429 with Retry-After', async ({ srv, user }) => {
  const res = await create(srv, user.token, { url: A, conversions: true })
  const { cid } = await visit(srv, res.body.code, 2)
  const ip = '10.98.0.1'
  for (let i = 0; i < 30; i++) assert.is((await call(srv.url, 'POST', `/c/${cid}`, { ip })).status, 204)
  const refused = await call(srv.url, 'POST', `/c/${cid}`, { ip })
  assertError(refused, 429, 'RATE_LIMIT_EXCEEDED')
  assert.ok(Number(refused.headers.get('retry-after')) >= 1)
})

test('promote_winner: a confident winner becomes the url, the variants end, and link.updated is sent', async ({ srv, user }) => {
  const rx = await new Receiver().start()
  try {
    const hook = await call(srv.url, 'POST', '/api/v1/webhooks', { token: user.token, body: { url: rx.url, events: ['link.updated'] } })
    assert.is(hook.status, 201, hook.text)
    const res = await create(srv, user.token, { url: 'https://example.com/', variants: [{ url: A, weight: 50 }, { url: B, weight: 50 }], conversions: true, promote_winner: true })
    const code = res.body.code
    const clicks: Array<{ i: number; target: string; cid: string }> = []
    for (let i = 0; i < 300; i++) clicks.push({ i, ...(await visit(srv, code, 1000 + i)) } as any)
    await flush(srv)
    assert.equal((await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })).body.url, 'https://example.com/', 'not before a winner')
    // B converts half of its visits, A none
    for (const c of clicks.filter((c) => c.target === B).filter((_, k) => k % 2 === 0)) assert.is((await call(srv.url, 'POST', `/c/${c.cid}`, visitor(1000 + c.i))).status, 204)
    await flush(srv)
    const link = await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })
    assert.equal([link.body.url, link.body.variants, link.body.promote_winner, link.body.conversions], [B, [], false, true])
    const after = await visit(srv, code, 5)
    assert.is(after.target, B, 'every visitor now goes to the winner')
    await until(3_000, () => rx.of('link.updated').some((r) => r.event.data.code === code))
    assert.is(rx.of('link.updated').find((r) => r.event.data.code === code)!.event.data.url, B)
  } finally {
    await rx.stop()
  }
})

test.run()
