// The pure parts of the owner statistics: the bot list, referrer hosts, the 20-host cap, dates and ranges of
// /stats, query parameters, RFC 3339 expiry, the QR drawing, the router's "/:param/rest" routes,
// the redirect cache's expiry and the new configuration variables.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { encode } from 'uqr'
import { loadConfig } from '../../src/config.js'
import { HttpError } from '../../src/http/errors.js'
import { Query } from '../../src/http/query.js'
import { Router } from '../../src/http/router.js'
import { isBot } from '../../src/stats/bots.js'
import { qrSvg } from '../../src/links/qr.js'
import { EXPIRED } from '../../src/links/link-state.js'
import { RedirectCache } from '../../src/links/redirect-cache.js'
import { referrerHost } from '../../src/stats/referrer.js'
import { statsJobBounds } from '../../src/stats/job.js'
import { capReferrers } from '../../src/stats/queries.js'
import { parseRange } from '../../src/links/stats.js'
import { parseLinkChange, parseLinkCreate, parseTimestamp } from '../../src/links/validate.js'
import { dateOf } from '../../src/stats/visits.js'
import { fieldErrors } from '../helpers/fields.js'

/** The field errors of a 422 INVALID_QUERY thrown by fn. */
function queryErrors(fn: () => unknown): Array<[string, string]> {
  try {
    fn()
  } catch (err) {
    assert.instance(err, HttpError)
    assert.equal([(err as HttpError).status, (err as HttpError).code], [422, 'INVALID_QUERY'])
    return (err as HttpError).errors!.map((e) => [e.field, e.code])
  }
  return assert.unreachable('expected a 422 INVALID_QUERY') as never
}

// ---------------------------------------------------------------------------------------------
const visits = suite('visit facts: bots and referrers')

// A bot is a request whose User-Agent is empty or that isbot's maintained list names (crawlers,
// link-preview fetchers, monitors, libraries)
visits('empty, missing or blank User-Agents, crawlers (Googlebot), link previews and libraries are bots', () => {
  for (const ua of [undefined, '', '   ', 'Googlebot/2.1', 'Mozilla/5.0 (compatible; bingbot/2.0)', 'facebookexternalhit/1.1', 'Twitterbot/1.0',
    'Slackbot-LinkExpanding 1.0', 'TelegramBot (like TwitterBot)', 'WhatsApp/2.23', 'Mozilla/5.0 ... HeadlessChrome/120', 'curl/8.5.0',
    'python-requests/2.31', 'Go-http-client/1.1', 'Mozilla/5.0 (compatible; YandexBot/3.0)', 'Discordbot/2.0', 'LinkedInBot/1.0',
    // what the hand-written list caught before isbot replaced it: none of it may become human
    'Baiduspider', 'Sogou web spider', 'SeznamBot/4.0', 'Yahoo! Slurp', 'ia_archiver', 'facebookcatalog/1.0', 'meta-externalagent/1.1',
    'SkypeUriPreview Preview/0.5', 'vkShare', 'Mozilla/5.0 (compatible; Embedly/0.2)', 'Quora Link Preview/1.0', 'Iframely/1.3.1',
    'Chrome-Lighthouse', 'PhantomJS/2.1', 'Pingdom.com_bot_version_1.4', 'UptimeRobot/2.0', 'StatusCake', 'W3C_Validator/1.3',
    'check_http/v2.3', 'Mozilla/5.0 zgrab/0.x', 'masscan/1.3', 'Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)', 'CensysInspect/1.1',
    'Nuclei - Open-source project', 'Wget/1.21', 'HTTPie/3.2', 'Python-urllib/3.11', 'python-httpx/0.27', 'aiohttp/3.9', 'okhttp/4.9',
    'Java/17.0.1', 'Apache-HttpClient/4.5', 'libwww-perl/6.72', 'axios/1.6.0', 'node-fetch/1.0', 'undici', 'got (https://github.com/sindresorhus/got)',
    'GuzzleHttp/7', 'PostmanRuntime/7.36', 'insomnia/2023.5', 'Scrapy/2.11', 'Feedly/1.0']) {
    assert.ok(isBot(ua), String(ua))
  }
})

visits('browsers, in-app browsers included, are humans', () => {
  for (const ua of ['Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
    'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36 [Pinterest/Android]',
    'Mozilla/5.0 (iPhone) AppleWebKit/605.1.15 Mobile/15E148 Instagram 300.0']) {
    assert.not.ok(isBot(ua), ua)
  }
})

// Per referrer host (from Referer; none is "direct"); no full referrer URL is stored
visits('the Referer is reduced to its lowercase host; none is "direct"; unreadable is "other"', () => {
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'direct'],
    ['', 'direct'],
    ['https://News.Example.com/item?id=1&token=x', 'news.example.com'],
    ['http://user:pw@example.org:8080/a', 'example.org'],
    ['https://example.org./', 'example.org'],
    ['https://[2001:DB8::1]:443/x', '[2001:db8::1]'],
    ['android-app://com.google.android.gm/', 'com.google.android.gm'],
    ['https://xn--bcher-kva.example/', 'xn--bcher-kva.example'],
    ['not a url', 'other'],
    ['https:///path', 'other'],
    ['https://exa mple.com/', 'other'],
    [`https://${'a'.repeat(254)}/`, 'other'],
  ]
  for (const [referer, host] of cases) assert.is(referrerHost(referer), host, String(referer))
})

// At most 20 hosts per link and day, the rest counted as "other"
visits('the cap keeps stored hosts, gives free places to the busiest new hosts, folds the rest into "other"', () => {
  const known = Array.from({ length: 18 }, (_, i) => ({ code: 'AAAAAAAA', day: '2026-01-01', host: `k${i}.example` }))
  known.push({ code: 'AAAAAAAA', day: '2026-01-01', host: 'direct' })
  const incoming = { codes: [] as string[], days: [] as string[], hosts: [] as string[], visits: [] as number[] }
  const add = (code: string, day: string, host: string, n: number) => {
    incoming.codes.push(code)
    incoming.days.push(day)
    incoming.hosts.push(host)
    incoming.visits.push(n)
  }
  add('AAAAAAAA', '2026-01-01', 'k3.example', 1) // known: keeps its row
  add('AAAAAAAA', '2026-01-01', 'new-small.example', 1)
  add('AAAAAAAA', '2026-01-01', 'new-big.example', 9)
  add('AAAAAAAA', '2026-01-01', 'new-mid.example', 5)
  add('AAAAAAAA', '2026-01-01', 'direct', 2)
  add('AAAAAAAA', '2026-01-01', 'other', 1)
  add('AAAAAAAA', '2026-01-02', 'fresh.example', 4) // another day: its own 20
  const out = capReferrers(known, incoming, 20)
  const rows = out.codes.map((c, i) => `${c} ${out.days[i]} ${out.hosts[i]} ${out.visits[i]}`)
  assert.equal(rows, [
    'AAAAAAAA 2026-01-01 direct 2',
    'AAAAAAAA 2026-01-01 k3.example 1',
    'AAAAAAAA 2026-01-01 new-big.example 9',
    'AAAAAAAA 2026-01-01 new-mid.example 5',
    'AAAAAAAA 2026-01-01 other 2',
    'AAAAAAAA 2026-01-02 fresh.example 4',
  ])
})

// ---------------------------------------------------------------------------------------------
const ranges = suite('stats ranges and the daily job')
const NOW = Date.parse('2026-03-10T15:00:00Z')
const range = (query: string) => {
  const r = parseRange(new Query(`/x${query}`), NOW)
  return [dateOf(r.from), dateOf(r.to)]
}

ranges('defaults: 30 days through today (UTC); from alone runs to today; to alone goes 29 days back', () => {
  assert.equal(range(''), ['2026-02-09', '2026-03-10'])
  assert.equal(range('?from=2026-03-01'), ['2026-03-01', '2026-03-10'])
  assert.equal(range('?to=2026-01-31'), ['2026-01-02', '2026-01-31'])
  assert.equal(range('?from=2026-03-10&to=2026-03-10'), ['2026-03-10', '2026-03-10'])
  assert.equal(range('?to=1970-01-05'), ['1970-01-01', '1970-01-05'], 'never before 1970-01-01')
  assert.equal(range('?from=&to='), ['2026-02-09', '2026-03-10'], 'empty means absent')
})

ranges('at most 400 days, from not after to, real calendar dates only', () => {
  assert.equal(range('?from=2025-02-04&to=2026-03-10'), ['2025-02-04', '2026-03-10'])
  assert.equal(queryErrors(() => range('?from=2025-02-03&to=2026-03-10')), [['from', 'INVALID']])
  assert.equal(queryErrors(() => range('?from=2026-03-11')), [['from', 'INVALID']])
  assert.equal(queryErrors(() => range('?from=2025-02-29&to=10000-01-01')), [['from', 'INVALID'], ['to', 'INVALID']])
  assert.equal(queryErrors(() => range('?from=2026-3-1')), [['from', 'INVALID']])
  assert.equal(queryErrors(() => range('?from=2026-03-01&from=2026-03-02')), [['from', 'INVALID']])
})

ranges('the job reduces days that ended over 15 minutes ago, keeps STATS_RETENTION_DAYS days and has partitions from yesterday to 3 days ahead', () => {
  assert.equal(statsJobBounds(Date.parse('2026-03-10T00:10:00Z'), 400), { reduceBefore: '2026-03-09', keepFrom: '2025-02-04', createFrom: '2026-03-09', aheadTo: '2026-03-13' })
  assert.equal(statsJobBounds(Date.parse('2026-03-10T00:20:00Z'), 1), { reduceBefore: '2026-03-10', keepFrom: '2026-03-10', createFrom: '2026-03-09', aheadTo: '2026-03-13' })
})

// ---------------------------------------------------------------------------------------------
const query = suite('query parameters')

query('whole numbers within bounds, one of a list, each parameter at most once', () => {
  const q = new Query('/x?size=64&margin=0&ecc=Q&x=%31')
  assert.equal([q.int('size', 32, 4096), q.int('margin', 0, 16), q.oneOf('ecc', ['L', 'M'] as const), q.string('x'), q.string('absent')], [64, 0, undefined, '1', undefined])
  assert.equal(queryErrors(() => q.check()), [['ecc', 'INVALID']])
  const bad = new Query('/x?a=-1&b=1e3&c=99999&d=1&d=2&e=31')
  bad.int('a', 0, 9)
  bad.int('b', 0, 9)
  bad.int('c', 0, 9)
  bad.int('d', 0, 9)
  bad.int('e', 32, 64)
  assert.equal(queryErrors(() => bad.check()), [['a', 'TYPE'], ['b', 'TYPE'], ['c', 'TOO_LONG'], ['d', 'INVALID'], ['e', 'TOO_SHORT']])
  new Query(undefined).check()
})

// ---------------------------------------------------------------------------------------------
const expiry = suite('expires_at')
const T0 = Date.parse('2026-01-01T00:00:00Z')

expiry('RFC 3339 timestamps with any offset and fraction are read to the millisecond', () => {
  assert.is(parseTimestamp('2026-06-01T12:30:00.1234Z')?.toISOString(), '2026-06-01T12:30:00.123Z')
  assert.is(parseTimestamp('2026-06-01t12:30:00+02:00')?.toISOString(), '2026-06-01T10:30:00.000Z')
  assert.is(parseTimestamp('2024-02-29T00:00:00z')?.toISOString(), '2024-02-29T00:00:00.000Z')
  for (const bad of ['2025-02-29T00:00:00Z', '2026-00-01T00:00:00Z', '2026-01-01T00:00:00', '2026-01-01T00:00:60Z', '0000-01-01T00:00:00Z', '2026-01-01T00:00:00+24:00', '2026-01-01T00:00:00+01:60', ' 2026-01-01T00:00:00Z']) {
    assert.is(parseTimestamp(bad), undefined, bad)
  }
})

expiry('create: expires_at must be a future timestamp, or null for none', () => {
  assert.equal(parseLinkCreate({ url: 'https://e.x/' }, T0).expiresAt, null)
  assert.equal(parseLinkCreate({ url: 'https://e.x/', expires_at: null }, T0).expiresAt, null)
  assert.is(parseLinkCreate({ url: 'https://e.x/', expires_at: '2026-01-01T00:00:00.001Z' }, T0).expiresAt?.getTime(), T0 + 1)
  assert.equal(fieldErrors(() => parseLinkCreate({ url: 'https://e.x/', expires_at: '2026-01-01T00:00:00Z' }, T0)).map((e) => e.code), ['INVALID'])
  assert.equal(fieldErrors(() => parseLinkCreate({ url: 'https://e.x/', expires_at: [] }, T0)).map((e) => e.code), ['TYPE'])
})

expiry('PATCH: url and/or expires_at; null clears; neither is url REQUIRED', () => {
  assert.equal(parseLinkChange({ expires_at: null }, T0), { expiresAt: null })
  assert.equal(parseLinkChange({ url: 'https://e.x/' }, T0), { url: 'https://e.x/' })
  assert.equal(parseLinkChange({ url: null, expires_at: null }, T0), { expiresAt: null })
  assert.equal(fieldErrors(() => parseLinkChange({}, T0)).map((e) => [e.field, e.code]), [['url', 'REQUIRED']])
  assert.equal(fieldErrors(() => parseLinkChange({ url: 'ftp://e.x/', expires_at: 'soon' }, T0)).map((e) => e.field), ['url', 'expires_at'])
})

expiry('the redirect cache answers EXPIRED once the wall clock passes the expiry, reading the clock only then', () => {
  let wall = 1_000
  let reads = 0
  const cache = new RedirectCache(1 << 20, 5_000, () => 0, () => (reads++, wall))
  cache.set('AAAAAAAA', 'https://e.x/', cache.epoch, 2_000)
  cache.set('BBBBBBBB', 'https://e.x/b', cache.epoch)
  assert.is(cache.get('AAAAAAAA'), 'https://e.x/')
  wall = 2_000
  assert.is(cache.get('AAAAAAAA'), EXPIRED)
  const before = reads
  assert.is(cache.get('BBBBBBBB'), 'https://e.x/b')
  assert.is(reads, before, 'a link without expiry reads no clock')
})

// ---------------------------------------------------------------------------------------------
const drawing = suite('QR drawing and routes')

drawing('the SVG has one run per stretch of dark modules, offset by the margin, at the asked size', () => {
  const svg = qrSvg('https://sho.rt/r/aZ3kP9qR', { size: 100, margin: 2, ecc: 'L' })
  const data = encode('https://sho.rt/r/aZ3kP9qR', { ecc: 'L', border: 0 }).data
  const runs = data.reduce((n, row) => n + row.filter((dark, x) => dark && !row[x - 1]).length, 0)
  assert.is([...svg.matchAll(/M\d+ \d+h\d+v1h-\d+z/g)].length, runs)
  assert.ok(svg.includes(`width="100" height="100" viewBox="0 0 ${data.length + 4} ${data.length + 4}"`))
  const first = /M(\d+) (\d+)h(\d+)/.exec(svg)!
  assert.equal([Number(first[1]), Number(first[2])], [2 + data[0]!.indexOf(true), 2])
})

drawing('the router matches "/prefix/:param/rest" routes by their rest, and lists every route', () => {
  const r = new Router<string>().add('GET', '/l/:code', 'one').add('GET', '/l/:code/qr', 'qr').add('DELETE', '/l/:code', 'del').add('GET', '/x', 'x')
  assert.equal(r.find('GET', '/l/abc/qr'), { found: true, value: 'qr', param: 'abc', path: '/l/:code/qr' })
  assert.equal(r.find('GET', '/l/abc'), { found: true, value: 'one', param: 'abc', path: '/l/:code' })
  assert.equal(r.find('HEAD', '/l/abc/qr'), { found: true, value: 'qr', param: 'abc', path: '/l/:code/qr' })
  for (const miss of ['/l//qr', '/l/a/b/qr', '/l/abc/qrx', '/l/abc/', '/l/']) assert.equal(r.find('GET', miss), { found: false, allow: null }, miss)
  assert.equal(r.find('GET', '/l/qr'), { found: true, value: 'one', param: 'qr', path: '/l/:code' }, 'a code may be "qr"')
  assert.equal(r.find('POST', '/l/abc/qr'), { found: false, allow: 'GET, HEAD' })
  assert.equal(r.routes(), [
    { method: 'GET', path: '/x' },
    { method: 'GET', path: '/l/:code' },
    { method: 'DELETE', path: '/l/:code' },
    { method: 'GET', path: '/l/:code/qr' },
  ])
})

// ---------------------------------------------------------------------------------------------
const config = suite('configuration of statistics')

config('VISIT_STATS is on or off; STATS_RETENTION_DAYS from 1 to 36500, 400 by default', () => {
  assert.equal([loadConfig({}).visitStats, loadConfig({}).statsRetentionDays], [true, 400])
  assert.equal([loadConfig({ VISIT_STATS: 'off' }).visitStats, loadConfig({ STATS_RETENTION_DAYS: '1' }).statsRetentionDays], [false, 1])
  for (const env of [{ VISIT_STATS: 'no' }, { STATS_RETENTION_DAYS: '0' }, { STATS_RETENTION_DAYS: '36501' }, { STATS_RETENTION_DAYS: '1.5' }]) {
    assert.throws(() => loadConfig(env), /VISIT_STATS|STATS_RETENTION_DAYS/)
  }
})

visits.run()
ranges.run()
query.run()
expiry.run()
drawing.run()
config.run()
