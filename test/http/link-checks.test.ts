// Destination health checks end to end, with a local target server: a page that answers 200,
// then 404, then 200 again; a hop that redirects to a blocked host; a private address refused
// with the default settings; and the owner's check on demand.
import * as assert from 'uvu/assert'
import { blockHost } from '../../src/admin/blocks.js'
import { listReports } from '../../src/reports/queries.js'
import { monthlyFigures } from '../../src/transparency/queries.js'
import { assertError, assertQueryError, call, newLink, newUser, uniqueName, type User } from '../helpers/api.js'
import { metricValue } from '../helpers/metrics.js'
import { Receiver } from '../helpers/receiver.js'
import { serverSuite } from '../helpers/server.js'
import { Target } from '../helpers/target.js'
import { until } from '../helpers/wait.js'

const ENV = {
  LINK_CHECKS: 'on',
  LINK_CHECK_INTERVAL_S: '10',
  LINK_CHECK_ALLOW_PRIVATE: 'on',
  WEBHOOK_ALLOW_HTTP: 'on',
  WEBHOOK_ALLOW_PRIVATE: 'on',
  WEBHOOK_POLL_MS: '200',
  METRICS_PORT: '0',
}

const checks = serverSuite<{ target: Target; rx: Receiver; user: User }>('link checks', ENV)
checks.before(async (ctx) => {
  // On a database shared with earlier suites (PostgreSQL), their links are due too, ahead of
  // these, and each asks example.com with no network here: put them off so these come first.
  await ctx.srv.service.db.sql`update link_checks set next_check_at = now() + interval '1 day'`
  ctx.target = await new Target().start()
  ctx.rx = await new Receiver().start()
  ctx.user = await newUser(ctx.srv.url)
  const hook = await call(ctx.srv.url, 'POST', '/api/v1/webhooks', { token: ctx.user.token, body: { url: ctx.rx.url, events: ['link.unhealthy', 'link.healthy'] } })
  assert.is(hook.status, 201)
})
checks.after(async (ctx) => {
  await ctx.target?.stop()
  await ctx.rx?.stop()
})

const healthOf = async (base: string, token: string, code: string) => (await call(base, 'GET', `/api/v1/links/${code}`, { token })).body.health

checks('a page that answers 200 is ok within seconds; answering 404 it is broken within 40 s and link.unhealthy is sent; 200 again, ok and link.healthy', async ({ srv, target, rx, user }) => {
  target.answer('/page', { status: 200 })
  const link = await newLink(srv.url, user.token, target.url('/page'))
  assert.is(link.health.status, 'unchecked', 'a new link is not checked yet')
  await until(5_000, async () => (await healthOf(srv.url, user.token, link.code)).status === 'ok')
  const ok = await healthOf(srv.url, user.token, link.code)
  assert.equal([ok.http_status, ok.final_url, ok.detail], [200, target.url('/page'), null])
  assert.ok(target.requests.some((r) => r.path === '/page' && r.method === 'HEAD' && r.userAgent?.includes(srv.service.deps.baseUrl)), 'HEAD, with a User-Agent naming the service')

  target.answer('/page', { status: 404 })
  const waited = await until(40_000, async () => (await healthOf(srv.url, user.token, link.code)).status === 'broken', { every: 250 })
  const broken = await healthOf(srv.url, user.token, link.code)
  assert.equal([broken.http_status, broken.detail], [404, 'answered 404'])
  assert.ok(target.of('/page') >= 3, 'twice in a row before it is shown')
  await until(5_000, () => rx.of('link.unhealthy').some((r) => r.event.data.code === link.code))
  const event = rx.of('link.unhealthy').find((r) => r.event.data.code === link.code)!
  assert.is(event.event.data.health.status, 'broken')
  assert.ok(typeof event.headers['webhook-signature'] === 'string', 'signed as the other events')
  process.stdout.write(`  broken shown ${waited} ms after the page began to answer 404\n`)

  const listed = await call(srv.url, 'GET', '/api/v1/links?health=broken', { token: user.token })
  assert.equal(listed.body.links.map((l: any) => l.code), [link.code])
  const csv = await call(srv.url, 'GET', '/api/v1/links?format=csv&health=broken', { token: user.token })
  assert.ok(csv.text.split('\r\n')[0]!.endsWith(',health') && csv.text.split('\r\n')[1]!.endsWith(',broken'), csv.text)

  // The owner's check on demand: one ok check decides at once.
  target.answer('/page', { status: 200 })
  const now = await call(srv.url, 'POST', `/api/v1/links/${link.code}/check`, { token: user.token })
  assert.is(now.status, 200)
  assert.is(now.body.status, 'ok')
  await until(5_000, () => rx.of('link.healthy').some((r) => r.event.data.code === link.code))
  assert.is(redirectStatus(await fetch(`${srv.url}/r/${link.code}`, { redirect: 'manual' })), 302, 'a broken link is never stopped')
  assert.ok((await metricValue(srv, 'link_service_link_checks_total{result="broken"}')) >= 2)
  assert.ok((await metricValue(srv, 'link_service_link_checks_total{result="ok"}')) >= 2)
})

checks('a hop that redirects to a blocked host is flagged at once: the link answers 410 with a page that says why, a report is opened, and /transparency.json counts the stop', async ({ srv, target, rx, user }) => {
  const [before] = await monthlyFigures(srv.service.db.sql, 1)
  const evil = `${uniqueName('evil')}.example`
  await blockHost(srv.service.db.sql, evil)
  target.answer('/hop', { status: 302, location: `http://${evil}/login` })
  const link = await newLink(srv.url, user.token, target.url('/hop'))
  await until(5_000, async () => (await healthOf(srv.url, user.token, link.code)).status === 'flagged')
  const health = await healthOf(srv.url, user.token, link.code)
  assert.is(health.final_url, `http://${evil}/login`)
  assert.match(health.detail, evil)
  const res = await call(srv.url, 'GET', `/r/${link.code}`)
  assertError(res, 410, 'LINK_DISABLED')
  const page = await fetch(`${srv.url}/r/${link.code}`, { headers: { accept: 'text/html' }, redirect: 'manual' })
  assert.is(page.status, 410)
  assert.match(await page.text(), 'A check of where it leads found')
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })).body.disabled, true)
  const reports = (await listReports(srv.service.db.sql, true)).filter((r) => r.code === link.code)
  assert.equal(reports.map((r) => r.reason), ['link-check'])
  const [stops] = await srv.service.db.sql<{ n: number }[]>`select count(*)::int as n from link_check_stops where code = ${link.code}`
  assert.is(stops!.n, 1)
  const published = await call(srv.url, 'GET', '/transparency.json')
  const month = published.body.months.at(-1)
  assert.equal([month.month, month.links_stopped_by_health_checks], [before!.month, before!.links_stopped_by_health_checks + 1], 'one more stop by health checks this month')
  await until(5_000, () => rx.of('link.unhealthy').some((r) => r.event.data.code === link.code && r.event.data.health.status === 'flagged'))

  // Its destination fixed, the next check starts it again.
  target.answer('/hop', { status: 200 })
  assert.is((await call(srv.url, 'POST', `/api/v1/links/${link.code}/check`, { token: user.token })).body.status, 'ok')
  assert.is(redirectStatus(await fetch(`${srv.url}/r/${link.code}`, { redirect: 'manual' })), 302)
})

checks('a health filter that is not a status is 422 INVALID_QUERY', async ({ srv, user }) => {
  assertQueryError(await call(srv.url, 'GET', '/api/v1/links?health=dead', { token: user.token }), ['health'])
})

checks.run()

const defaults = serverSuite<{ target: Target; user: User }>('link checks with the default settings', { LINK_CHECKS: 'on' })
defaults.before(async (ctx) => {
  await ctx.srv.service.db.sql`update link_checks set next_check_at = now() + interval '1 day'`
  ctx.target = await new Target().start()
  ctx.user = await newUser(ctx.srv.url)
})
defaults.after(async (ctx) => {
  await ctx.target?.stop()
})

defaults('a private address is not asked: two checks find it unreachable, and the link still redirects', async ({ srv, target, user }) => {
  const link = await newLink(srv.url, user.token, target.url('/private'))
  // The check queued at creation is the first; the owner's check on demand, the second.
  const failures = async () => (await srv.service.db.sql<{ n: number }[]>`select failures as n from link_checks where code = ${link.code}`)[0]?.n ?? 0
  await until(10_000, async () => (await failures()) === 1)
  const first = await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })
  assert.is(first.body.health.status, 'unchecked', 'one failure is not shown yet')
  const second = await call(srv.url, 'POST', `/api/v1/links/${link.code}/check`, { token: user.token })
  assert.is(second.body.status, 'unreachable')
  assert.match(second.body.detail, 'private or local address')
  assert.is(target.requests.length, 0, 'nothing reached the private address')
  assert.is(redirectStatus(await fetch(`${srv.url}/r/${link.code}`, { redirect: 'manual' })), 302)
  assert.equal((await listReports(srv.service.db.sql, true)).filter((r) => r.code === link.code), [], 'no report for an unreachable link')
})

defaults('checks on demand are limited per account: the eleventh at once is 429', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token, 'http://10.0.0.1/')
  for (let i = 0; i < 10; i++) assert.is((await call(srv.url, 'POST', `/api/v1/links/${link.code}/check`, { token: user.token })).status, 200)
  assertError(await call(srv.url, 'POST', `/api/v1/links/${link.code}/check`, { token: user.token }), 429, 'RATE_LIMIT_EXCEEDED')
})

defaults('another account\'s link is 404 LINK_NOT_FOUND', async ({ srv, user }) => {
  const other = await newUser(srv.url)
  const link = await newLink(srv.url, other.token)
  assertError(await call(srv.url, 'POST', `/api/v1/links/${link.code}/check`, { token: user.token }), 404, 'LINK_NOT_FOUND')
})

defaults.run()

const off = serverSuite('link checks turned off', { LINK_CHECKS: 'off' })
off('with LINK_CHECKS=off a check on demand is 409 LINK_CHECKS_OFF and links stay unchecked', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  assertError(await call(srv.url, 'POST', `/api/v1/links/${link.code}/check`, { token: user.token }), 409, 'LINK_CHECKS_OFF')
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })).body.health.status, 'unchecked')
})
off.run()

function redirectStatus(res: Response): number {
  void res.body?.cancel()
  return res.status
}
