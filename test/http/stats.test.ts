// GET /api/v1/links/{code}/stats: visits per UTC day, humans and bots, referrer hosts
// and unique visitors, counted in memory on the redirect path and written by the flush.
import * as assert from 'uvu/assert'
import { SKETCH_BYTES } from '../../src/stats/sketch.js'
import { daySalt, runStatsJob } from '../../src/stats/queries.js'
import { assertQueryError, call, newLink, newUser, type Res, type User } from '../helpers/api.js'
import { feedSettled, serverSuite, type TestServer, twoNodeSuite } from '../helpers/server.js'
import { sleep, until } from '../helpers/wait.js'

const DAY_MS = 86_400_000
/** The partitions of a statistics table (sql/0016), by name. */
const partitions = async (sql: TestServer['service']['db']['sql'], table: string) =>
  (await sql<{ name: string }[]>`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = ${table}::regclass`).map((r) => r.name)
const CRAWLER = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36'
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
const today = () => new Date().toISOString().slice(0, 10)
const dayBefore = (date: string, n: number) => new Date(Date.parse(date) - n * DAY_MS).toISOString().slice(0, 10)

const visit = (srv: TestServer, code: string, headers: Record<string, string> = {}, ip?: string) =>
  call(srv.url, 'GET', `/r/${code}`, { headers: { 'user-agent': BROWSER, ...headers }, ip })
const stats = (srv: TestServer, token: string, code: string, query = '') =>
  call(srv.url, 'GET', `/api/v1/links/${code}/stats${query}`, { token })
/** A day's counts, without its breakdowns (tested on their own below). */
const dayOf = (res: Res, date: string) => {
  const { visits, humans, bots, uniques } = res.body.days.find((d: { date: string }) => d.date === date)
  return { date, visits, humans, bots, uniques }
}

const test = serverSuite<{ user: User }>('link statistics', { BASE_URL: 'https://sho.rt' })
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

// Five redirects (three with a Referer, two from a crawler User-Agent) show
// up in /stats within two seconds as total 5, bots 2, the referrer host with 3, on today's date
test('five redirects show up within two seconds: total 5, bots 2, the referrer host with 3, today', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const referer = 'https://news.example.com/item?id=42&token=s3cret'
  for (const ip of ['192.0.2.1', '192.0.2.1', '192.0.2.2']) assert.is((await visit(srv, link.code, { referer }, ip)).status, 302)
  for (let i = 0; i < 2; i++) assert.is((await visit(srv, link.code, { 'user-agent': CRAWLER })).status, 302)
  let res: Res | undefined
  await until(2_000, async () => {
    res = await stats(srv, user.token, link.code)
    return res.body.total === 5
  })
  assert.is(res!.status, 200)
  assert.equal(Object.keys(res!.body), ['code', 'from', 'to', 'total', 'humans', 'bots', 'days', 'referrers', 'devices', 'browsers', 'os', 'countries', 'variants', 'experiment'])
  assert.is(res!.body.code, link.code)
  assert.is(res!.body.bots, 2)
  assert.is(res!.body.humans, 3)
  assert.equal(dayOf(res!, today()), { date: today(), visits: 5, humans: 3, bots: 2, uniques: 2 })
  assert.equal(res!.body.referrers, [
    { host: 'news.example.com', visits: 3 },
    { host: 'direct', visits: 2 },
  ])
})

// One entry per day in the range, zeros included; default: the last 30 days through today
test('the default range is the last 30 days through today, one entry per day with zeros', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const res = await stats(srv, user.token, link.code)
  assert.is(res.status, 200, res.text)
  assert.is(res.body.to, today())
  assert.is(res.body.from, dayBefore(today(), 29))
  assert.is(res.body.days.length, 30)
  assert.equal(res.body.days[0], {
    date: dayBefore(today(), 29), visits: 0, humans: 0, bots: 0, uniques: 0, devices: {}, browsers: {}, os: {}, countries: {},
  })
  res.body.days.forEach((d: { date: string }, i: number) => assert.is(d.date, dayBefore(today(), 29 - i)))
  assert.equal([res.body.total, res.body.humans, res.body.bots, res.body.referrers], [0, 0, 0, []])
  assert.equal([res.body.devices, res.body.browsers, res.body.os, res.body.countries], [[], [], [], []])
})

test('from and to choose the range, both included; 400 days is the most', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const one = await stats(srv, user.token, link.code, '?from=2024-02-28&to=2024-03-01')
  assert.is(one.status, 200, one.text)
  assert.equal(one.body.days.map((d: { date: string }) => d.date), ['2024-02-28', '2024-02-29', '2024-03-01'])
  const max = await stats(srv, user.token, link.code, '?from=2024-01-01&to=2025-02-03')
  assert.is(max.status, 200, max.text)
  assert.is(max.body.days.length, 400)
  const onlyTo = await stats(srv, user.token, link.code, '?to=2024-01-30')
  assert.equal([onlyTo.body.from, onlyTo.body.to], ['2024-01-01', '2024-01-30'])
})

// contract §2: bad query parameters are a 422 in the error shape (INVALID_QUERY, see docs/api.md)
test('bad dates and ranges are 422 INVALID_QUERY naming each parameter', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  assertQueryError(await stats(srv, user.token, link.code, '?from=2024-02-30'), ['from'])
  assertQueryError(await stats(srv, user.token, link.code, '?from=yesterday&to=2024-13-01'), ['from', 'to'])
  assertQueryError(await stats(srv, user.token, link.code, '?from=1969-12-31&to=1970-01-02'), ['from'])
  assertQueryError(await stats(srv, user.token, link.code, '?from=2024-03-02&to=2024-03-01'), ['from'])
  assertQueryError(await stats(srv, user.token, link.code, '?from=2024-01-01&to=2025-02-04'), ['from'])
  assertQueryError(await stats(srv, user.token, link.code, '?to=2024-01-01&to=2024-01-02'), ['to'])
  const res = await stats(srv, user.token, link.code, '?from=2024-02-30')
  assert.is(res.body.errors[0].code, 'INVALID')
  assert.match(res.body.message, /^from: /)
})

test('another account’s link, an unknown or malformed code are 404 LINK_NOT_FOUND; no token is 401', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const other = await newUser(srv.url)
  for (const [token, code] of [[other.token, link.code], [user.token, 'Unkn0wn9'], [user.token, 'short']] as const) {
    const res = await stats(srv, token, code)
    assert.is(res.status, 404)
    assert.is(res.body.code, 'LINK_NOT_FOUND')
  }
  assert.is((await stats(srv, undefined as unknown as string, link.code)).status, 401)
  // the parameters are checked before the look-up (contract §2's order)
  assertQueryError(await stats(srv, other.token, link.code, '?from=x'), ['from'])
})

test('cached and uncached redirects count once each; a HEAD counts nothing', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  await feedSettled(srv)
  srv.service.deps.cache.invalidate(link.code)
  await visit(srv, link.code) // uncached: read from the database
  assert.ok(srv.service.deps.cache.get(link.code), 'now cached')
  await visit(srv, link.code) // from the cache
  assert.is((await call(srv.url, 'HEAD', `/r/${link.code}`)).status, 302)
  await srv.service.deps.visits.flush()
  const res = await stats(srv, user.token, link.code)
  assert.equal(dayOf(res, today()), { date: today(), visits: 2, humans: 2, bots: 0, uniques: 2 })
  const one = await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })
  assert.is(one.body.visits, 2)
})

// A bot is a request whose User-Agent is empty or that isbot names (link previews included)
test('an empty or missing User-Agent and crawler or preview User-Agents are bots', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const agents = ['', 'facebookexternalhit/1.1', 'Slackbot-LinkExpanding 1.0', 'curl/8.5.0', 'WhatsApp/2.23.20.0', 'Twitterbot/1.0',
    'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)', 'TelegramBot (like TwitterBot)', 'LinkedInBot/1.0 (compatible; Mozilla/5.0)']
  for (const ua of agents) await visit(srv, link.code, { 'user-agent': ua })
  await srv.service.deps.visits.flush()
  const res = await stats(srv, user.token, link.code)
  assert.equal([res.body.bots, res.body.humans], [agents.length, 0])
  assert.is(dayOf(res, today()).uniques, 0, 'bots are not unique visitors')
})

// Uniques are distinct (client address, user agent) pairs of the day, humans only
test('unique visitors: one address once, whatever its browser; another address again', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  await visit(srv, link.code, {}, '192.0.2.10')
  await visit(srv, link.code, {}, '192.0.2.10')
  await srv.service.deps.visits.flush()
  await visit(srv, link.code, {}, '192.0.2.10') // the same visitor in a later flush
  await visit(srv, link.code, {}, '192.0.2.11')
  await visit(srv, link.code, { 'user-agent': `${BROWSER} Edg/126.0` }, '192.0.2.10')
  await srv.service.deps.visits.flush()
  const res = await stats(srv, user.token, link.code)
  assert.equal(dayOf(res, today()), { date: today(), visits: 5, humans: 5, bots: 0, uniques: 2 })
})

// Any visitor could grow the per-visitor hashes without bound with a random User-Agent per
// request; the sketch is a fixed size, and one address is one visitor.
test('50,000 visits with random User-Agents from one address add at most one sketch and one unique', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const sql = srv.service.db.sql
  await visit(srv, link.code, {}, '203.0.113.50')
  await srv.service.deps.visits.flush()
  const size = async () => (await sql<{ n: number }[]>`
    select coalesce(pg_column_size(sketch), 0)::int + pg_column_size(d.*)::int as n from visit_days d where code = ${link.code}`)[0]!.n
  const before = await size()
  const visitor = { userAgent: undefined as string | undefined, referer: undefined, forwardedFor: '203.0.113.50', peer: '127.0.0.1' }
  for (let i = 0; i < 50_000; i++) {
    visitor.userAgent = `Mozilla/5.0 (X11; Linux x86_64) Firefox/${i}.${Math.floor(Math.random() * 1e9)}`
    srv.service.deps.visits.record(link.code, { ...visitor })
    if (i % 10_000 === 9_999) await srv.service.deps.visits.flush()
  }
  await srv.service.deps.visits.flush()
  assert.ok((await size()) <= Math.max(before, SKETCH_BYTES + 200), `the day's row is ${await size()} bytes`)
  const res = await stats(srv, user.token, link.code)
  assert.equal(dayOf(res, today()), { date: today(), visits: 50_001, humans: 50_001, bots: 0, uniques: 1 })
})

// At most 20 referrer hosts per link and day, the rest counted as "other"; none is "direct"
test('referrers: hosts only, at most 20 per day (across flushes), the rest "other", none "direct"', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  for (let i = 0; i < 15; i++) await visit(srv, link.code, { referer: `https://site${i}.example/page?q=${i}` })
  await visit(srv, link.code, { referer: 'HTTPS://User:Pw@Site0.Example.:8443/x' })
  await srv.service.deps.visits.flush()
  for (let i = 15; i < 25; i++) await visit(srv, link.code, { referer: `https://site${i}.example/` })
  await visit(srv, link.code, { referer: 'https://site3.example/again' }) // known: keeps its row
  await visit(srv, link.code)
  await visit(srv, link.code, { referer: 'not a url' })
  await srv.service.deps.visits.flush()
  const res = await stats(srv, user.token, link.code)
  const byHost = new Map(res.body.referrers.map((r: { host: string; visits: number }) => [r.host, r.visits]))
  const named = [...byHost.keys()].filter((h) => h !== 'other' && h !== 'direct')
  assert.is(named.length, 20)
  assert.is(byHost.get('site0.example'), 2)
  assert.is(byHost.get('site3.example'), 2)
  assert.is(byHost.get('direct'), 1)
  assert.is(byHost.get('other'), 5 + 1, '5 hosts past the cap and one unreadable Referer')
  assert.is(res.body.referrers[0].visits, 6, 'by visits, descending')
  const sum = res.body.referrers.reduce((n: number, r: { visits: number }) => n + r.visits, 0)
  assert.is(sum, res.body.total)
})

// After expiry, /r/{code} answers 410 LINK_EXPIRED and counts nothing
test('an expired link counts nothing', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  await srv.service.db.sql`update links set expires_at = now() - interval '1 second' where code = ${link.code}`
  srv.service.deps.cache.invalidate(link.code)
  assert.is((await visit(srv, link.code)).status, 410)
  assert.is((await visit(srv, link.code)).status, 410) // cached
  await srv.service.deps.visits.flush()
  const res = await stats(srv, user.token, link.code)
  assert.is(res.body.total, 0)
})

// No IP address, full referrer URL or cookie is stored; hashes are reduced to a count
// once the day is over, with the day's salt
test('no address, referrer URL or cookie is stored; the daily job deletes finished days’ salts, and the count stays', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  await visit(srv, link.code, { referer: 'https://news.example.com/item?id=42&token=s3cret', cookie: 'a=b' }, '198.51.100.7')
  await visit(srv, link.code, {}, '198.51.100.8')
  await srv.service.deps.visits.flush()
  const sql = srv.service.db.sql
  const stored = JSON.stringify([
    await sql`select * from visit_days`,
    await sql`select * from visit_referrers`,
  ])
  for (const secret of ['198.51.100', 's3cret', 'item?id', 'a=b', 'Chrome']) assert.not.ok(stored.includes(secret), secret)
  const tomorrow = new Date(Date.now() + DAY_MS).toISOString().slice(0, 10)
  assert.is.not(await runStatsJob(sql, tomorrow, '1970-01-01', today(), today()), undefined)
  const [after] = await sql<{ salts: number }[]>`select count(*)::int as salts from visit_salts where day < ${tomorrow}::date`
  assert.equal(after, { salts: 0 })
  assert.is(dayOf(await stats(srv, user.token, link.code), today()).uniques, 2, 'the count stays')
})

test('days past the retention are deleted by the daily job, days without a partition too; a deleted link takes its rows along', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const sql = srv.service.db.sql
  // Two days within STATS_RETENTION_DAYS (400) that have no partition: the job's own bounds say the first is past.
  const [gone, kept] = [dayBefore(today(), 40), dayBefore(today(), 39)]
  await sql`insert into visit_days (code, day, humans, bots, uniques) values (${link.code}, ${gone}, 3, 1, 2), (${link.code}, ${kept}, 5, 0, 4)`
  await sql`insert into visit_referrers (code, day, host, visits) values (${link.code}, ${gone}, 'direct', 4), (${link.code}, ${kept}, 'direct', 5)`
  assert.is.not(await runStatsJob(sql, gone, kept, kept, kept), undefined)
  assert.ok((await partitions(sql, 'visit_days')).includes(`visit_days_${kept.replaceAll('-', '')}`), 'the kept day left the default partition for its own')
  const res = await stats(srv, user.token, link.code, `?from=${gone}&to=${kept}`)
  assert.equal(res.body.days.map((d: { visits: number }) => d.visits), [0, 5])
  assert.equal(res.body.referrers, [{ host: 'direct', visits: 5 }])
  assert.is((await call(srv.url, 'DELETE', `/api/v1/links/${link.code}`, { token: user.token })).status, 204)
  // The deletion queues the link's statistics; the job's next run deletes them.
  assert.is.not(await runStatsJob(sql, gone, kept, kept, kept), undefined)
  const [left] = await sql<{ n: number }[]>`
    select (select count(*) from visit_days where code = ${link.code}) + (select count(*) from visit_referrers where code = ${link.code}) as n`
  assert.is(Number(left!.n), 0)
})

// Issue 22: retention drops whole days (their partitions), whatever their size, and never touches today's
test('the daily job drops the partitions of days past STATS_RETENTION_DAYS and keeps today\'s, rows and all; the coming days\' are made ahead', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const sql = srv.service.db.sql
  const old = dayBefore(today(), 10)
  const ahead = dayBefore(today(), -3)
  const compact = (day: string) => day.replaceAll('-', '')
  await runStatsJob(sql, old, old, old, today()) // the old day's partitions, made when it was today
  await sql`insert into visit_days (code, day, humans, bots) values (${link.code}, ${old}, 7, 0)`
  await sql`insert into visit_referrers (code, day, host, visits) values (${link.code}, ${old}, 'direct', 7)`
  await sql`insert into visit_dims (code, day, dim, value, visits) values (${link.code}, ${old}, 'os', 'iOS', 7)`
  for (const table of ['visit_days', 'visit_referrers', 'visit_dims']) assert.ok((await partitions(sql, table)).includes(`${table}_${compact(old)}`), table)
  await visit(srv, link.code, { 'user-agent': IPHONE }, '8.8.8.8')
  await visit(srv, link.code, {}, '192.0.2.1')
  await srv.service.deps.visits.flush()

  const dropped = await runStatsJob(sql, today(), dayBefore(today(), 5), dayBefore(today(), 1), ahead)
  assert.ok(dropped !== undefined && dropped >= 1, `dropped ${dropped}`)
  for (const table of ['visit_days', 'visit_referrers', 'visit_dims']) {
    const names = await partitions(sql, table)
    assert.not.ok(names.includes(`${table}_${compact(old)}`), `${table}: the old day is gone`)
    for (const day of [today(), ahead]) assert.ok(names.includes(`${table}_${compact(day)}`), `${table}: ${day} is there`)
  }
  const res = await stats(srv, user.token, link.code, `?from=${old}&to=${today()}`)
  assert.is(dayOf(res, old).visits, 0, 'the old day’s rows went with it')
  assert.is(dayOf(res, today()).visits, 2, 'today’s rows are kept')
  assert.equal(res.body.referrers.map((r: { host: string }) => r.host), ['direct'])
  assert.is((await sql<{ n: number }[]>`select count(*)::int as n from visit_days_default where code = ${link.code}`)[0]!.n, 0, 'nothing of today waits in the default partition')
})

// Issue 22: a read over 400 days plans and probes about 45 partitions a table, not 403.
test('the daily job merges a finished month within retention into one partition that reads the same, and drops it once its last day passes retention', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const sql = srv.service.db.sql
  const first = `${dayBefore(today(), 200).slice(0, 8)}01`
  const mid = dayBefore(first, -14)
  const month = first.slice(0, 7).replace('-', '')
  for (const day of [first, mid]) {
    await sql`insert into visit_days (code, day, humans, bots, uniques) values (${link.code}, ${day}, 4, 1, 3)`
    await sql`insert into visit_referrers (code, day, host, visits) values (${link.code}, ${day}, 'news.example', 5)`
    await sql`insert into visit_dims (code, day, dim, value, visits) values (${link.code}, ${day}, 'os', 'Linux', 4)`
  }
  const before = await stats(srv, user.token, link.code, `?from=${first}&to=${mid}`)
  const keepFrom = dayBefore(today(), 399)
  // The first run gives the two days their partitions and merges the oldest finished month, theirs.
  await runStatsJob(sql, today(), keepFrom, dayBefore(today(), 1), today())
  for (const table of ['visit_days', 'visit_referrers', 'visit_dims']) {
    const names = await partitions(sql, table)
    assert.ok(names.includes(`${table}_${month}`), `${table}: the month's partition`)
    assert.is(names.filter((n) => n.startsWith(`${table}_${month}`)).length, 1, `${table}: no day partition of the month left: ${names.join(' ')}`)
  }
  const after = await stats(srv, user.token, link.code, `?from=${first}&to=${mid}`)
  assert.equal(after.body, before.body, 'the merged month reads as its days did')
  assert.equal([after.body.total, after.body.referrers, after.body.os], [10, [{ host: 'news.example', visits: 10 }], [{ name: 'Linux', visits: 8 }]])
  // A flush (or an import) of a day in a merged month lands in the month's partition.
  await sql`insert into visit_days (code, day, humans, bots) values (${link.code}, ${dayBefore(first, -1)}, 2, 0)`
  assert.is((await stats(srv, user.token, link.code, `?from=${first}&to=${mid}`)).body.total, 12)
  // Retention reaches into the month: its first days read as zeros, the partition stays until its last day passes.
  await runStatsJob(sql, today(), dayBefore(first, -2), dayBefore(today(), 1), today())
  assert.ok((await partitions(sql, 'visit_days')).includes(`visit_days_${month}`))
  const next = `${dayBefore(first, -40).slice(0, 8)}01`
  assert.ok((await runStatsJob(sql, today(), next, dayBefore(today(), 1), today()))! >= 1)
  for (const table of ['visit_days', 'visit_referrers', 'visit_dims']) assert.not.ok((await partitions(sql, table)).includes(`${table}_${month}`), `${table}: the month is gone`)
  assert.is((await sql<{ n: number }[]>`select count(*)::int as n from visit_days where code = ${link.code}`)[0]!.n, 0)
})

test('a partition\'s name gives its day or its month, and nothing for the other kind or another name (the job compares both in one WHERE)', async ({ srv }) => {
  const sql = srv.service.db.sql
  const [r] = await sql<{ day: string | null; month: string | null; notDay: string | null; notMonth: string | null; other: string | null }[]>`
    select visit_stats_day_of('visit_dims_20251024')::text as day, visit_stats_month_of('visit_referrers_202511')::text as month,
           visit_stats_day_of('visit_days_202511')::text as "notDay", visit_stats_month_of('visit_days_20251024')::text as "notMonth",
           coalesce(visit_stats_day_of('visit_days_default'), visit_stats_month_of('visit_days_default'))::text as other`
  assert.equal(r, { day: '2025-10-24', month: '2025-11-01', notDay: null, notMonth: null, other: null })
})

test('days past STATS_RETENTION_DAYS read as zeros even while a merged month still holds them', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  const sql = srv.service.db.sql
  const past = dayBefore(today(), 400) // the first day past the default 400
  const kept = dayBefore(today(), 399)
  await sql`insert into visit_days (code, day, humans, bots) values (${link.code}, ${past}, 9, 0), (${link.code}, ${kept}, 2, 0)`
  const res = await stats(srv, user.token, link.code, `?from=${past}&to=${kept}`)
  assert.equal(res.body.days.map((d: { visits: number }) => d.visits), [0, 2])
  assert.is(res.body.total, 2)
})

// Device, browser, OS and country per day, from the User-Agent and the client address at the flush.
// 8.8.8.0/24 is Google's public resolver: the bundled ip-location-db database places it in the US.
test('an iPhone Safari visit from a known range shows as mobile, Safari, iOS and its country; a Googlebot visit is a bot', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  for (let i = 0; i < 2; i++) await visit(srv, link.code, { 'user-agent': IPHONE }, '8.8.8.8')
  await visit(srv, link.code, {}, '2001:4860:4860::8888')
  await visit(srv, link.code, { 'user-agent': CRAWLER }, '8.8.8.8')
  await srv.service.deps.visits.flush()
  const res = await stats(srv, user.token, link.code)
  assert.equal([res.body.humans, res.body.bots], [3, 1], 'Googlebot counts as a bot')
  assert.equal(res.body.devices, [{ name: 'mobile', visits: 2 }, { name: 'desktop', visits: 1 }])
  assert.equal(res.body.browsers, [{ name: 'Safari', visits: 2 }, { name: 'Chrome', visits: 1 }])
  assert.equal(res.body.os, [{ name: 'iOS', visits: 2 }, { name: 'Linux', visits: 1 }])
  assert.equal(res.body.countries, [{ name: 'US', visits: 3 }], 'bots are not in the breakdowns')
  const day = res.body.days.find((d: { date: string }) => d.date === today())
  assert.equal([day.devices, day.browsers, day.os, day.countries], [{ mobile: 2, desktop: 1 }, { Safari: 2, Chrome: 1 }, { iOS: 2, Linux: 1 }, { US: 3 }])
  const stored = await srv.service.db.sql<{ value: string }[]>`select value from visit_dims where code = ${link.code}`
  assert.not.ok(stored.some((r) => r.value.includes('8.8') || r.value.includes('4860')), 'no address is stored')
})

test('breakdowns add up across flushes; an unplaceable address is "unknown", an unknown agent "other"', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  await visit(srv, link.code, { 'user-agent': IPHONE }, '8.8.8.8')
  await srv.service.deps.visits.flush()
  await visit(srv, link.code, { 'user-agent': IPHONE }, '8.8.4.4')
  await visit(srv, link.code, { 'user-agent': 'Mozilla/5.0 (Plan9) Acme/1.0' }, '10.1.2.3')
  await srv.service.deps.visits.flush()
  const res = await stats(srv, user.token, link.code)
  assert.equal(res.body.devices, [{ name: 'mobile', visits: 2 }, { name: 'other', visits: 1 }])
  assert.equal(res.body.browsers, [{ name: 'Safari', visits: 2 }, { name: 'other', visits: 1 }])
  assert.equal(res.body.countries, [{ name: 'US', visits: 2 }, { name: 'unknown', visits: 1 }])
})

test('CSV (?format=csv or Accept: text/csv): a header row, then one row per day with every column', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  await visit(srv, link.code, { 'user-agent': IPHONE }, '8.8.8.8')
  await visit(srv, link.code, { 'user-agent': CRAWLER }, '8.8.8.8')
  await srv.service.deps.visits.flush()
  const range = `from=${dayBefore(today(), 2)}&to=${today()}`
  const byQuery = await stats(srv, user.token, link.code, `?${range}&format=csv`)
  const byAccept = await call(srv.url, 'GET', `/api/v1/links/${link.code}/stats?${range}`, { token: user.token, headers: { accept: 'text/csv' } })
  for (const res of [byQuery, byAccept]) {
    assert.is(res.status, 200, res.text)
    assert.is(res.headers.get('content-type'), 'text/csv; charset=utf-8; header=present')
    assert.is(res.headers.get('content-disposition'), `attachment; filename="${link.code}-${dayBefore(today(), 2)}-${today()}.csv"`)
    assert.is(res.text, [
      'date,visits,humans,bots,uniques,device:mobile,browser:Safari,os:iOS,country:US',
      `${dayBefore(today(), 2)},0,0,0,0,0,0,0,0`,
      `${dayBefore(today(), 1)},0,0,0,0,0,0,0,0`,
      `${today()},2,1,1,1,1,1,1,1`,
      '',
    ].join('\r\n'))
  }
  const json = await call(srv.url, 'GET', `/api/v1/links/${link.code}/stats?format=json`, { token: user.token, headers: { accept: 'text/csv' } })
  assert.is(json.body.code, link.code, '?format=json wins over Accept')
  assertQueryError(await stats(srv, user.token, link.code, '?format=xml&from=x'), ['format', 'from'])
})

// Counts appear within one flush interval and survive a failed flush
test('a flush that fails keeps its counts for the next one', async ({ srv, user }) => {
  const link = await newLink(srv.url, user.token)
  await visit(srv, link.code, { referer: 'https://kept.example/' }, '203.0.113.5')
  const sql = srv.service.db.sql
  await sql`alter table visit_referrers rename to visit_referrers_away`
  try {
    await srv.service.deps.visits.flush()
  } finally {
    await sql`alter table visit_referrers_away rename to visit_referrers`
  }
  await visit(srv, link.code, {}, '203.0.113.5')
  await srv.service.deps.visits.flush()
  const res = await stats(srv, user.token, link.code)
  assert.equal(dayOf(res, today()), { date: today(), visits: 2, humans: 2, bots: 0, uniques: 1 })
  assert.equal(res.body.referrers, [{ host: 'direct', visits: 1 }, { host: 'kept.example', visits: 1 }])
})

test.run()

const off = serverSuite('VISIT_STATS=off', { VISIT_STATS: 'off' })
off('counts only the link’s total: no day rows', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  await visit(srv, link.code)
  await srv.service.deps.visits.flush()
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })).body.visits, 1)
  assert.is((await stats(srv, user.token, link.code)).body.total, 0)
})
off.run()

// Several nodes all count exactly once, uniques included
if (process.env.DATABASE_URL !== undefined) {
  const nodes = twoNodeSuite('statistics on two nodes')
  nodes('visits on two nodes sum exactly; one visitor on both is one unique; the 20-host cap holds', async ({ a, b }) => {
    const user = await newUser(a.url)
    const link = await newLink(a.url, user.token)
    for (const srv of [a, b]) {
      await visit(srv, link.code, {}, '192.0.2.50')
      await visit(srv, link.code, { 'user-agent': CRAWLER })
      for (let i = 0; i < 15; i++) await visit(srv, link.code, { referer: `https://${srv === a ? 'a' : 'b'}${i}.example/` }, '192.0.2.51')
    }
    await Promise.all([a.service.deps.visits.flush(), b.service.deps.visits.flush()])
    const res = await stats(b, user.token, link.code)
    assert.equal(dayOf(res, today()), { date: today(), visits: 34, humans: 32, bots: 2, uniques: 2 })
    const named = res.body.referrers.filter((r: { host: string }) => r.host !== 'direct' && r.host !== 'other')
    assert.is(named.length, 20)
    assert.equal(res.body.referrers.find((r: { host: string }) => r.host === 'other'), { host: 'other', visits: 10 })
  })
  // regression: two nodes making a day's salt at once: the second once got no row back ("do
  // nothing", then a select that could not see the first's insert yet), and its flush failed
  nodes('a node asking for a day’s salt while another is making it gets that salt', async ({ a, b }) => {
    const salt = Buffer.alloc(32, 1)
    await a.service.db.sql`delete from visit_salts where day = '2099-01-01'`
    let inserted!: () => void
    let commit!: () => void
    const insertedP = new Promise<void>((r) => (inserted = r))
    const commitP = new Promise<void>((r) => (commit = r))
    const making = a.service.db.sql.begin(async (tx) => {
      await tx`insert into visit_salts (day, salt) values ('2099-01-01', ${salt})`
      inserted()
      await commitP
    })
    await insertedP
    try {
      const asked = daySalt(b.service.db.sql, '2099-01-01') // waits for A's transaction
      await sleep(200)
      commit()
      await making
      assert.equal(await asked, salt)
    } finally {
      commit()
      await a.service.db.sql`delete from visit_salts where day = '2099-01-01'`
    }
  })
  nodes.run()
}
