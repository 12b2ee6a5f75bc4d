// POST /api/v1/reports: anyone reports a link by code or short URL (202); one open report per
// link and address; each address has its own allowance; REPORTS_SUSPEND_AFTER suspends a link.
import * as assert from 'uvu/assert'
import { call, newLink, newUser, randomIp, type User } from '../helpers/api.js'
import { metricValue } from '../helpers/metrics.js'
import { serverSuite, type TestServer } from '../helpers/server.js'

const report = (srv: TestServer, body: unknown, ip = randomIp()) => call(srv.url, 'POST', '/api/v1/reports', { body, ip })
const stored = async (srv: TestServer, code: string) =>
  (await srv.service.db.sql<{ n: number }[]>`select count(*)::int as n from reports where code = ${code}`)[0]!.n


const test = serverSuite<{ user: User }>('POST /api/v1/reports', { METRICS_PORT: '0' })
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('a report without an account, by code or by short URL as copied, answers 202 and is stored once per address', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const ip = randomIp()
  const byCode = await report(srv, { code: link.code, reason: 'phishing', details: 'asks for my bank password' }, ip)
  assert.is(byCode.status, 202)
  assert.equal(byCode.body, { code: link.code, reason: 'phishing', received: true })
  const shortUrl = new URL(link.short_url)
  for (const url of [link.short_url, `${link.short_url}/preview`, `${shortUrl.host}/r/${link.code}?utm=x`]) {
    const res = await report(srv, { url, reason: 'spam' }, ip)
    assert.equal([res.status, res.body.code], [202, link.code], url)
  }
  assert.is(await stored(srv, link.code), 1, 'a repeat from the same address is not stored')
  assert.is((await report(srv, { code: link.code, reason: 'malware' })).status, 202)
  assert.is(await stored(srv, link.code), 2)
  assert.ok((await metricValue(srv, 'link_service_reports_open')) >= 2)
  assert.ok((await metricValue(srv, 'link_service_reports_received_total{reason="phishing"}')) >= 1)
})

test('an unknown or deleted code answers 404 LINK_NOT_FOUND', async ({ srv, user }) => {
  assert.is((await report(srv, { code: 'Zz9Zz9Zz', reason: 'spam' })).body.code, 'LINK_NOT_FOUND')
  const link = await newLink(srv.url, user.token)
  await call(srv.url, 'DELETE', `/api/v1/links/${link.code}`, { token: user.token })
  const res = await report(srv, { url: link.short_url, reason: 'spam' })
  assert.equal([res.status, res.body.code], [404, 'LINK_NOT_FOUND'])
})

test('422 lists each field: no link, a url that is no short link, an unknown reason, details over 1000 characters', async ({ srv }) => {
  const none = await report(srv, { reason: 'spam' })
  assert.equal([none.status, none.body.errors], [422, [{ field: 'code', code: 'REQUIRED', message: 'code or url is required' }]])
  const bad = await report(srv, { url: 'https://phish.example/login', reason: 'scary', details: 'x'.repeat(1001) })
  assert.equal(bad.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]), [['url', 'INVALID'], ['reason', 'INVALID'], ['details', 'TOO_LONG']])
  assert.equal((await report(srv, { code: 'short', reason: 'spam' })).body.errors[0].field, 'code')
})

test('each address has its own allowance: five at once, the sixth answers 429 with Retry-After', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const ip = randomIp()
  const statuses = []
  for (let i = 0; i < 6; i++) statuses.push((await report(srv, { code: link.code, reason: 'other' }, ip)).status)
  assert.equal(statuses, [202, 202, 202, 202, 202, 429])
  const denied = await report(srv, { code: link.code, reason: 'other' }, ip)
  assert.equal([denied.body.code, Number(denied.headers.get('retry-after')) >= 1], ['RATE_LIMIT_EXCEEDED', true])
  assert.is((await report(srv, { code: link.code, reason: 'other' })).status, 202, 'another address is not affected')
})

test.run()

const suspend = serverSuite<{ user: User }>('REPORTS_SUSPEND_AFTER=2', { REPORTS_SUSPEND_AFTER: '2' })
suspend.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

suspend('reports from two distinct addresses suspend the link: 410, "disabled" for its owner, who may not change it', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const ip = randomIp()
  assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).status, 302)
  await report(srv, { code: link.code, reason: 'phishing' }, ip)
  await report(srv, { code: link.code, reason: 'phishing' }, ip) // the same address twice counts once
  assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).status, 302)
  await report(srv, { code: link.code, reason: 'malware' })
  const gone = await call(srv.url, 'GET', `/r/${link.code}`)
  assert.equal([gone.status, gone.body.code], [410, 'LINK_DISABLED'])
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })).body.disabled, true)
  const patched = await call(srv.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body: { url: 'https://elsewhere.example/' } })
  assert.equal([patched.status, patched.body.code], [403, 'LINK_DISABLED'])
  assert.ok(srv.logs.some((l) => l.includes('link suspended by reports') && l.includes(link.code)))
})

suspend.run()
