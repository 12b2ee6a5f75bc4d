// GET /api/v1/users/me/export: a person's own data, whole, as JSON or as CSV files in a ZIP; never a
// password hash, a session token (nor its digest) or a webhook secret; a few a minute per account.
import { createHash } from 'node:crypto'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, type User } from '../helpers/api.js'
import { serverSuite, type TestServer } from '../helpers/server.js'
import { hasUnzip, unzipAll } from '../helpers/unzip.js'
import { until } from '../helpers/wait.js'

interface Fixture {
  user: User
  codes: string[]
  /** every secret value this account has, as the service knows it */
  secrets: Array<[what: string, value: string]>
}

const test = serverSuite<{ fx: Fixture }>('GET /api/v1/users/me/export', { WEBHOOK_ALLOW_HTTP: 'on', WEBHOOK_ALLOW_PRIVATE: 'on' })

/** An account with a handful of links (a password, tags, rules, a cap, a card), three days of statistics, a webhook with a delivery. */
test.before(async (ctx) => {
  const { srv } = ctx
  const user = await newUser(srv.url)
  const plain = await newLink(srv.url, user.token, 'https://example.com/plain')
  const rich = await call(srv.url, 'POST', '/api/v1/links', {
    token: user.token,
    body: {
      url: 'https://example.com/rich',
      password: 'link password 1',
      tags: ['Spring', 'promo'],
      max_visits: 100,
      title: 'A card',
      rules: [{ if: { device: 'ios' }, url: 'https://apps.apple.com/app/x' }],
    },
  })
  assert.is(rich.status, 201, rich.text)
  const third = await newLink(srv.url, user.token, 'https://example.org/=formula')
  const codes = [plain.code, rich.body.code, third.code]
  const sql = srv.service.db.sql
  for (const day of ['2026-01-01', '2026-01-02', '2026-01-03'].map((d) => new Date(Date.now() - 86_400_000 * (3 - Number(d.slice(-1)))).toISOString().slice(0, 10))) {
    await sql`insert into visit_days (code, day, humans, bots, uniques) values (${plain.code}, ${day}::date, 7, 2, 5)`
    await sql`insert into visit_referrers (code, day, host, visits) values (${plain.code}, ${day}::date, 'news.example', 4)`
    await sql`insert into visit_dims (code, day, dim, value, visits) values (${plain.code}, ${day}::date, 'country', 'DE', 6), (${plain.code}, ${day}::date, 'browser', 'Firefox', 7)`
  }
  // One real visit: its unique visitor is counted in the day's sketch, which the export reads too.
  const visit = await fetch(`${srv.url}/r/${third.code}`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0', 'x-forwarded-for': '10.1.2.3' } })
  assert.is(visit.status, 302)
  await until(10_000, async () => (await sql`select 1 from visit_days where code = ${third.code} and sketch is not null`).length === 1)
  const hook = await call(srv.url, 'POST', '/api/v1/webhooks', { token: user.token, body: { url: 'http://127.0.0.1:9/hook', events: ['link.created'] } })
  assert.is(hook.status, 201, hook.text)
  assert.is((await call(srv.url, 'POST', `/api/v1/webhooks/${hook.body.id}/test`, { token: user.token })).status, 202)
  const [stored] = await sql<{ password_hash: string }[]>`select password_hash from users where id = ${user.id}`
  const [linkHash] = await sql<{ password_hash: string }[]>`select password_hash from links where code = ${rich.body.code}`
  const digest = createHash('sha256').update(user.token).digest()
  ctx.fx = {
    user,
    codes,
    secrets: [
      ['account password', user.password],
      ['account password hash', stored!.password_hash],
      ['link password', 'link password 1'],
      ['link password hash', linkHash!.password_hash],
      ['session token', user.token],
      ['session token digest (hex)', digest.toString('hex')],
      ['session token digest (base64)', digest.toString('base64')],
      ['webhook secret', hook.body.secret],
      ['webhook secret key', hook.body.secret.replace(/^whsec_/, '')],
    ],
  }
})

const fetchExport = (srv: TestServer, token: string, query = '') =>
  fetch(`${srv.url}/api/v1/users/me/export${query}`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '10.9.9.9' } })

function assertNoSecrets(raw: Buffer, secrets: Fixture['secrets'], what: string): void {
  for (const [name, value] of secrets) assert.is(raw.indexOf(Buffer.from(value)), -1, `${what} holds the ${name}`)
}

test('the JSON export holds the account, every link with its statistics by day and breakdowns, sessions, webhooks and deliveries, and no secret', async ({ srv, fx }) => {
  const res = await call(srv.url, 'GET', '/api/v1/users/me/export', { token: fx.user.token })
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-length'), null, 'streamed, not built first')
  assert.match(res.headers.get('content-disposition')!, new RegExp(`^attachment; filename="link-service-${fx.user.username}-\\d{4}-\\d{2}-\\d{2}\\.json"$`))
  assert.is(res.headers.get('cache-control'), 'no-store')
  const body = res.body
  assert.equal([body.format, body.version, body.account.username, body.account.disabled], ['link-service-account-export', 1, fx.user.username, false])
  assert.equal(body.links.map((l: { code: string }) => l.code).sort(), [...fx.codes].sort())
  const rich = body.links.find((l: { url: string }) => l.url === 'https://example.com/rich')
  assert.equal([rich.password, rich.password_protected, rich.tags, rich.max_visits, rich.title, rich.rules.length], ['set', true, ['Spring', 'promo'], 100, 'A card', 1])
  const plain = body.links.find((l: { url: string }) => l.url === 'https://example.com/plain')
  assert.is(plain.password, null)
  assert.is(plain.statistics.length, 3)
  assert.equal(plain.statistics[0], {
    day: plain.statistics[0].day,
    humans: 7,
    bots: 2,
    uniques: 5,
    referrers: [{ host: 'news.example', visits: 4 }],
    devices: [],
    browsers: [{ name: 'Firefox', visits: 7 }],
    os: [],
    countries: [{ name: 'DE', visits: 6 }],
  })
  const visited = body.links.find((l: { url: string }) => l.url === 'https://example.org/=formula')
  assert.equal(visited.statistics.map((d: { humans: number; uniques: number; browsers: unknown }) => [d.humans, d.uniques, d.browsers]), [[1, 1, [{ name: 'Firefox', visits: 1 }]]])
  assert.is(body.sessions.length, 1)
  assert.equal(Object.keys(body.sessions[0]).sort(), ['created_at', 'expires_at', 'id', 'last_used_at'])
  assert.is(body.webhooks.length, 1)
  assert.equal([body.webhooks[0].url, body.webhooks[0].deliveries.length, body.webhooks[0].deliveries[0].event], ['http://127.0.0.1:9/hook', 1, 'webhook.test'])
  assert.not.ok('secret' in body.webhooks[0])
  assertNoSecrets(Buffer.from(res.text), fx.secrets, 'the JSON export')
})

test('?format=zip is CSV files in a ZIP that unzip reads, with the same rows and no secret', async ({ srv, fx }) => {
  const token = (await call(srv.url, 'POST', '/api/v1/auth/login', { body: { username: fx.user.username, password: fx.user.password } })).body.token
  const res = await fetchExport(srv, token, '?format=zip')
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), 'application/zip')
  const raw = Buffer.from(await res.arrayBuffer())
  assertNoSecrets(raw, [...fx.secrets, ['second session token', token]], 'the ZIP export')
  if (!hasUnzip()) {
    console.log('SKIPPED the unzip check: the unzip command is not installed (apt-get install unzip)')
    return
  }
  const { files } = unzipAll(raw)
  assert.equal(Object.keys(files).sort(), [
    'account.csv',
    'links.csv',
    'sessions.csv',
    'statistics_breakdowns.csv',
    'statistics_days.csv',
    'statistics_referrers.csv',
    'webhook_deliveries.csv',
    'webhooks.csv',
  ])
  for (const text of Object.values(files)) assertNoSecrets(Buffer.from(text), fx.secrets, 'an unzipped file')
  assert.is(files['account.csv']!.split('\r\n')[1]!.split(',')[1], fx.user.username)
  const links = files['links.csv']!.trim().split('\r\n')
  assert.is(links[0], 'code,url,short_url,created_at,updated_at,visits,last_visited_at,expires_at,disabled,starts_at,max_visits,visits_left,password,tags,title,description,image_url,rules')
  assert.is(links.length, 4)
  assert.ok(links.some((l) => l.includes(",'https://example.org/=formula") || l.includes(',https://example.org/=formula')))
  assert.ok(links.some((l) => l.includes(',set,Spring promo,A card,')))
  assert.is(files['statistics_days.csv']!.trim().split('\r\n').length, 5, 'a header, three days of one link, the visited day of another')
  assert.match(files['statistics_breakdowns.csv']!, /,country,DE,6\r\n/)
  assert.match(files['statistics_referrers.csv']!, /,news\.example,4\r\n/)
  assert.is(files['sessions.csv']!.trim().split('\r\n').length, 3, 'two sessions now')
  assert.match(files['webhook_deliveries.csv']!, /,webhook\.test,/)
})

test('another account sees only its own: an export of an empty account has no links', async ({ srv }) => {
  const other = await newUser(srv.url)
  const res = await call(srv.url, 'GET', '/api/v1/users/me/export', { token: other.token })
  assert.equal([res.status, res.body.links, res.body.webhooks], [200, [], []])
})

test('without a session 401; an unknown format 422 INVALID_QUERY', async ({ srv, fx }) => {
  assert.is((await call(srv.url, 'GET', '/api/v1/users/me/export')).status, 401)
  const bad = await call(srv.url, 'GET', '/api/v1/users/me/export?format=xml', { token: fx.user.token })
  assert.equal([bad.status, bad.body.code], [422, 'INVALID_QUERY'])
})

test('three exports at once per account, then 429 with Retry-After', async ({ srv }) => {
  const user = await newUser(srv.url)
  for (let i = 0; i < 3; i++) assert.is((await call(srv.url, 'GET', '/api/v1/users/me/export', { token: user.token })).status, 200, `export ${i + 1}`)
  const refused = await call(srv.url, 'GET', '/api/v1/users/me/export', { token: user.token })
  assert.equal([refused.status, refused.body.code], [429, 'RATE_LIMIT_EXCEEDED'])
  assert.ok(Number(refused.headers.get('retry-after')) >= 1)
  // per account, not per address
  const other = await newUser(srv.url)
  assert.is((await call(srv.url, 'GET', '/api/v1/users/me/export', { token: other.token })).status, 200)
})

test.run()
