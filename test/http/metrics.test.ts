// Issue 12 §4: "Prometheus metrics at GET /metrics on a separate listener (METRICS_PORT, off by
// default, METRICS_HOST default 127.0.0.1), never on the public port: requests by route and
// status class, request duration histograms by route, redirects by outcome (hit, miss, unknown,
// expired, disabled), redirect cache entries/bytes/evictions, visits waiting to be flushed and
// flush duration, password hashes running and waiting, database pool use and errors, rate-limit
// denials, and the process defaults."
import * as assert from 'uvu/assert'
import { suite } from 'uvu'
import { loadConfig, ConfigError } from '../../src/config.js'
import { call, newLink, newUser, randomIp } from '../helpers/api.js'
import { feedSettled, serverSuite, startServer } from '../helpers/server.js'
import { disableLink } from '../../src/admin/links.js'

const scrape = async (url: string) => {
  const res = await fetch(`${url}/metrics`)
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() }
}

/** The value of one series, e.g. sample(text, 'link_service_redirects_total{outcome="hit"}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

const test = serverSuite('metrics on METRICS_PORT', { METRICS_PORT: '0', VISIT_FLUSH_MS: '60000' })

test('metrics are served on their own listener, never on the public port', async ({ srv }) => {
  const metricsUrl = srv.service.metricsUrl
  assert.ok(metricsUrl !== undefined && metricsUrl !== srv.url, 'a listener of its own')
  assert.match(metricsUrl!, /^http:\/\/127\.0\.0\.1:\d+$/, 'METRICS_HOST defaults to 127.0.0.1')
  const got = await scrape(metricsUrl!)
  assert.is(got.status, 200)
  assert.match(got.type, /^text\/plain; version=0\.0\.4/)
  const pub = await call(srv.url, 'GET', '/metrics')
  assert.is(pub.status, 404)
  assert.is(pub.body.code, 'ROUTE_NOT_FOUND')
})

test('the metrics listener answers only GET|HEAD /metrics, in the error shape otherwise', async ({ srv }) => {
  const other = await fetch(`${srv.service.metricsUrl}/other`)
  assert.is(other.status, 404)
  assert.is(((await other.json()) as { code: string }).code, 'ROUTE_NOT_FOUND')
  const post = await fetch(`${srv.service.metricsUrl}/metrics`, { method: 'POST' })
  assert.is(post.status, 405)
  assert.is(post.headers.get('allow'), 'GET, HEAD')
})

test('redirects are counted by outcome, and requests by route pattern and status class', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  // On PostgreSQL the create's own notice empties the entry when it comes: heard before the visits.
  await feedSettled(srv)
  const before = (await scrape(srv.service.metricsUrl!)).text
  const count = (text: string, outcome: string) => sample(text, `link_service_redirects_total{outcome="${outcome}"}`) ?? 0
  for (const outcome of ['hit', 'miss', 'unknown', 'expired', 'disabled', 'exhausted']) assert.ok(sample(before, `link_service_redirects_total{outcome="${outcome}"}`) !== undefined, outcome)
  assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).status, 302) // a miss: read from the database
  assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).status, 302) // then a hit
  assert.is((await call(srv.url, 'GET', '/r/zzzzzzzz')).status, 404)
  const after = (await scrape(srv.service.metricsUrl!)).text
  assert.is(count(after, 'miss') - count(before, 'miss'), 1)
  assert.is(count(after, 'hit') - count(before, 'hit'), 1)
  assert.is(count(after, 'unknown') - count(before, 'unknown'), 1)
  assert.ok((sample(after, 'link_service_http_requests_total{route="GET /r/:code",status_class="3xx"}') ?? 0) >= 2)
  assert.ok((sample(after, 'link_service_http_requests_total{route="POST /api/v1/links",status_class="2xx"}') ?? 0) >= 1)
  assert.ok((sample(after, 'link_service_http_request_duration_seconds_count{route="GET /r/:code"}') ?? 0) >= 3)
  assert.ok(sample(after, 'link_service_http_request_duration_seconds_bucket{le="+Inf",route="GET /r/:code"}') !== undefined)
  // An unknown path is one label, whatever the path: a scanner cannot grow the series.
  await call(srv.url, 'GET', '/no/such/path/1')
  await call(srv.url, 'GET', '/no/such/path/2')
  const scanned = (await scrape(srv.service.metricsUrl!)).text
  assert.not.match(scanned, /no\/such/)
  assert.ok((sample(scanned, 'link_service_http_requests_total{route="unmatched",status_class="4xx"}') ?? 0) >= 2)
})

test('a redirect an operator stopped is counted as disabled', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  assert.ok(await disableLink(srv.service.db.sql, link.code, null))
  const before = sample((await scrape(srv.service.metricsUrl!)).text, 'link_service_redirects_total{outcome="disabled"}') ?? 0
  assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).status, 410)
  const after = sample((await scrape(srv.service.metricsUrl!)).text, 'link_service_redirects_total{outcome="disabled"}') ?? 0
  assert.is(after - before, 1)
})

test('states are read when scraped: cache, visits waiting, hashes, database pool, process defaults', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  await call(srv.url, 'GET', `/r/${link.code}`)
  const text = (await scrape(srv.service.metricsUrl!)).text
  const { cache, visits } = srv.service.deps
  assert.is(sample(text, 'link_service_redirect_cache_entries'), cache.size)
  assert.is(sample(text, 'link_service_redirect_cache_bytes'), cache.bytes)
  assert.ok(sample(text, 'link_service_redirect_cache_evictions_total') !== undefined)
  assert.ok((sample(text, 'link_service_visits_waiting') ?? 0) >= 1, 'VISIT_FLUSH_MS=60000: the visit waits')
  assert.is(sample(text, 'link_service_visits_waiting'), visits.waiting)
  for (const series of ['link_service_password_hashes_running', 'link_service_password_hashes_waiting', 'link_service_db_requests_waiting', 'link_service_db_errors_total', 'link_service_db_pool_replacements_total']) {
    assert.ok(sample(text, series) !== undefined, series)
  }
  assert.is(sample(text, 'link_service_db_pool_max_connections'), srv.service.db.poolMax)
  assert.ok((sample(text, 'process_cpu_seconds_total') ?? 0) > 0)
  assert.ok((sample(text, 'process_resident_memory_bytes') ?? 0) > 0)
  assert.match(text, /^nodejs_heap_size_used_bytes \d/m)
  await visits.flush()
  const flushed = (await scrape(srv.service.metricsUrl!)).text
  assert.is(sample(flushed, 'link_service_visits_waiting'), 0)
  assert.ok((sample(flushed, 'link_service_visit_flush_duration_seconds_count') ?? 0) >= 1)
})

test('a 429 is counted as a rate-limit denial of its route', async ({ srv }) => {
  // Registration takes a token before it reads the body: empty bodies drain the bucket at no cost.
  const ip = randomIp()
  let denied = 0
  for (let i = 0; i < 40 && denied === 0; i++) {
    const res = await call(srv.url, 'POST', '/api/v1/users', { ip, body: {} })
    if (res.status === 429) denied++
  }
  assert.is(denied, 1, "the address's bucket ran out")
  const text = (await scrape(srv.service.metricsUrl!)).text
  assert.ok((sample(text, 'link_service_rate_limit_denials_total{route="POST /api/v1/users"}') ?? 0) >= 1)
})

test.run()

const off = suite('metrics off by default')

off('without METRICS_PORT no metrics listener starts', async () => {
  const srv = await startServer()
  try {
    assert.is(srv.service.metricsUrl, undefined)
    assert.is(srv.service.deps.metrics.enabled, false)
  } finally {
    await srv.close()
  }
})

off('METRICS_PORT may not be the public port', () => {
  assert.throws(() => loadConfig({ PORT: '8080', METRICS_PORT: '8080' }), (err: unknown) => err instanceof ConfigError && /METRICS_PORT/.test(err.message))
  assert.throws(() => loadConfig({ METRICS_PORT: 'x' }), (err: unknown) => err instanceof ConfigError)
  assert.is(loadConfig({ METRICS_PORT: '9464' }).metricsPort, 9464)
  assert.is(loadConfig({}).metricsPort, undefined)
  assert.is(loadConfig({}).metricsHost, '127.0.0.1')
})

off.run()
