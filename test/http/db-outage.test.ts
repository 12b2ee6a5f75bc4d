// contract §2: 503 SERVICE_UNAVAILABLE while the database is unreachable; the service keeps
// running and recovers by itself. The database is reached through a TCP relay the test cuts.
// Needs DATABASE_URL (the embedded database cannot become unreachable).
import postgres from 'postgres'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, randomIp, type User } from '../helpers/api.js'
import { Relay } from '../helpers/relay.js'
import { feedSettled, startServer, type TestServer } from '../helpers/server.js'
import { sleep, until } from '../helpers/wait.js'

if (process.env.DATABASE_URL === undefined) {
  process.stdout.write('db-outage.test: not run: needs DATABASE_URL (npm test runs it in .ci/run)\n')
} else {
  const databaseUrl = process.env.DATABASE_URL
  interface Relayed {
    relay: Relay
    srv: TestServer
    user: User
    code: string
  }

  /** A server that reaches the database through a relay the test can cut or pause; a user and a link. */
  async function relayed(ctx: Relayed, env: Record<string, string>): Promise<void> {
    const { relay, url } = await Relay.to(databaseUrl)
    ctx.relay = relay
    ctx.srv = await startServer({ DATABASE_URL: url, ...env })
    ctx.user = await newUser(ctx.srv.url)
    ctx.code = (await newLink(ctx.srv.url, ctx.user.token)).code
  }

  /** The service recovers by itself (contract §2): the redirect answers again within 10 s. */
  async function redirectsAgain(srv: TestServer, code: string): Promise<void> {
    await until(10_000, async () => (await call(srv.url, 'GET', `/r/${code}`)).status === 302, { every: 100 })
  }

  const test = suite<Relayed>('database outage')
  // No cache: every redirect must ask the database.
  test.before((ctx) => relayed(ctx, { CACHE_MAX_BYTES: '0' }))
  test.after(async (ctx) => {
    if (!ctx.relay.server?.listening) await ctx.relay.open()
    await ctx.srv.close()
    await ctx.relay.cut()
  })

  test('while the database is unreachable: 503 SERVICE_UNAVAILABLE, never a crash; then it recovers', async ({ relay, srv, user, code }) => {
    await relay.cut()
    for (const [method, path, token] of [
      ['GET', '/healthz', undefined],
      ['GET', '/api/v1/links', user.token],
      ['GET', `/r/${code}`, undefined],
    ] as const) {
      const res = await call(srv.url, method, path, { token })
      assert.is(res.status, 503, path)
      assert.is(res.body.code, 'SERVICE_UNAVAILABLE', path)
      assert.ok(res.headers.get('x-request-id'))
    }
    await relay.open()
    await redirectsAgain(srv, code)
    assert.is((await call(srv.url, 'GET', '/healthz')).status, 200)
  })

  test.run()

  // The server answers, but refuses us: "not currently accepting connections" (SQLSTATE 55000),
  // as during maintenance. That is unavailable too, not an internal error.
  const refusing = suite<{ admin: postgres.Sql; name: string; srv: TestServer; user: User; code: string }>(
    'a database that refuses connections',
  )

  refusing.before(async (ctx) => {
    ctx.admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    ctx.name = `ls_refusing_${Date.now()}_${process.pid}`
    await ctx.admin`create database ${ctx.admin(ctx.name)}`
    const url = new URL(databaseUrl)
    url.pathname = `/${ctx.name}`
    ctx.srv = await startServer({ DATABASE_URL: url.href, CACHE_MAX_BYTES: '0' })
    ctx.user = await newUser(ctx.srv.url)
    ctx.code = (await newLink(ctx.srv.url, ctx.user.token)).code
  })
  refusing.after(async ({ admin, name, srv }) => {
    await admin`alter database ${admin(name)} allow_connections true`
    await srv.close()
    await admin`drop database if exists ${admin(name)} with (force)`
    await admin.end()
  })

  refusing('a database that refuses new connections answers 503 on every route, then recovers', async ({ admin, name, srv, user, code }) => {
    await admin`alter database ${admin(name)} allow_connections false`
    await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`
    for (const [method, path, token, body] of [
      ['GET', '/healthz', undefined, undefined],
      ['GET', `/r/${code}`, undefined, undefined],
      ['GET', '/api/v1/links', user.token, undefined],
      ['POST', '/api/v1/auth/login', undefined, { username: user.username, password: user.password }],
    ] as const) {
      const res = await call(srv.url, method, path, { token, body, ip: randomIp() })
      assert.is(res.status, 503, `${method} ${path}: ${res.text}`)
      assert.is(res.body.code, 'SERVICE_UNAVAILABLE', path)
      assert.is(res.headers.get('retry-after'), '1', path)
      if (path === '/api/v1/auth/login') {
        // contract §7: every response of the limited routes carries the headers, this one too
        assert.is(res.headers.get('x-ratelimit-limit'), '5')
        assert.is(res.headers.get('x-ratelimit-remaining'), '0')
      }
    }
    assert.not.ok(srv.logs.some((l) => l.includes('unhandled error')), 'nothing was logged as unhandled')
    await admin`alter database ${admin(name)} allow_connections true`
    await redirectsAgain(srv, code)
  })

  refusing.run()

  // A database that stops answering without a reset or a refusal (a partition, a fail-over
  // gone wrong): nothing that waits on it may wait for as long as TCP retries.
  const silent = suite<Relayed>('a database that goes silent')
  // Visits are flushed only when the test says so (and at the stop).
  silent.before((ctx) => relayed(ctx, { VISIT_FLUSH_MS: '60000' }))
  silent.after(async (ctx) => {
    ctx.relay.resume()
    await ctx.srv.close()
    await ctx.relay.cut()
  })

  // contract §8: GET /healthz → 503 when the database does not answer
  silent('/healthz answers 503 within 2 s when the database goes silent', async ({ relay, srv }) => {
    assert.is((await call(srv.url, 'GET', '/healthz')).status, 200)
    await sleep(5_100) // no fresh link write: the probe write runs too, beside the read
    relay.pause()
    const started = Date.now()
    const res = await call(srv.url, 'GET', '/healthz')
    assert.is(res.status, 503)
    assert.is(res.body.code, 'SERVICE_UNAVAILABLE')
    assert.ok(Date.now() - started < 2_000, `answered after ${Date.now() - started} ms`)
    relay.resume()
    assert.is((await call(srv.url, 'GET', '/healthz')).status, 200)
  })

  // contract §8: on SIGTERM it stops (bounded) and exits; a crash loses at most one
  // interval of visits, and a stop that cannot write them says so
  silent('a stop finishes within its bounds while the database is silent, and says the visits are lost', async ({ relay, srv, code }) => {
    assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 302)
    await srv.service.deps.visits.flush()
    assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 302) // counted, not yet written
    relay.pause()
    const started = Date.now()
    await srv.service.close()
    assert.ok(Date.now() - started < 12_000, `stopped after ${Date.now() - started} ms`)
    assert.ok(srv.logs.some((l) => l.includes('final visit flush did not finish')), 'the loss is logged')
  })

  silent.run()

  // While the database does not answer at all, requests that need it fail fast: after a few that
  // waited their whole DB_TIMEOUT_MS, the circuit opens; a probe closes it when the database is back.
  const breaker = suite<Relayed>('failing fast while the database is silent')
  breaker.before((ctx) => relayed(ctx, { DB_TIMEOUT_MS: '1500', CACHE_MAX_BYTES: '0' }))
  breaker.after(async (ctx) => {
    ctx.relay.resume()
    await ctx.srv.close()
    await ctx.relay.cut()
  })

  breaker('after a few requests time out, uncached requests answer 503 at once; they succeed again once it answers', async ({ relay, srv, user, code }) => {
    relay.pause()
    const first = await Promise.all([1, 2, 3].map(() => call(srv.url, 'GET', '/api/v1/links', { token: user.token })))
    assert.equal(first.map((r) => r.status), [503, 503, 503])
    for (const path of ['/api/v1/links', `/r/${code}`, '/api/v1/links', `/r/${code}`]) {
      const started = Date.now()
      const res = await call(srv.url, 'GET', path, { token: user.token })
      assert.is(res.status, 503, path)
      assert.is(res.body.code, 'SERVICE_UNAVAILABLE')
      assert.ok(Date.now() - started < 500, `${path} waited ${Date.now() - started} ms`)
    }
    // A write that meets the open circuit is refused before anything is sent: nothing is created.
    const refused = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/while-open' } })
    assert.is(refused.status, 503)
    // /healthz bounds its own checks: with the circuit open it still answers its document (call()
    // holds the body to docs/openapi.json), not the cut-short error shape of the other routes.
    const health = await call(srv.url, 'GET', '/healthz')
    assert.is(health.status, 503)
    assert.equal([health.body.code, health.body.status, health.body.database], ['SERVICE_UNAVAILABLE', 'unavailable', 'failing'])
    relay.resume()
    await until(10_000, async () => (await call(srv.url, 'GET', '/api/v1/links', { token: user.token })).status === 200, { every: 200 })
    await until(5_000, async () => (await call(srv.url, 'GET', `/r/${code}`)).status === 302, { every: 200 })
    const links = (await call(srv.url, 'GET', '/api/v1/links', { token: user.token })).body.links
    assert.not.ok(links.some((l: { url: string }) => l.url === 'https://example.com/while-open'), 'the refused create did not happen')
  })

  breaker.run()
}

if (process.env.DATABASE_URL !== undefined) {
  const databaseUrl = process.env.DATABASE_URL
  // Issue 8: while the change feed is down, codes already cached keep redirecting for at most
  // CACHE_STALE_MS; misses answer 503 within DB_TIMEOUT_MS; when the feed is back, a held entry
  // answers only when the read that should replace it fails. /healthz says what is down.
  const fromMemory = suite<{ relay: Relay; srv: TestServer; user: User; code: string }>('redirects from memory during an outage')
  fromMemory.before(async (ctx) => {
    const { relay, url } = await Relay.to(databaseUrl)
    ctx.relay = relay
    ctx.srv = await startServer({ DATABASE_URL: url, DB_TIMEOUT_MS: '1000', CACHE_STALE_MS: '60000' })
    ctx.user = await newUser(ctx.srv.url)
    ctx.code = (await newLink(ctx.srv.url, ctx.user.token)).code
  })
  fromMemory.after(async (ctx) => {
    if (!ctx.relay.server?.listening) await ctx.relay.open()
    await ctx.srv.close()
    await ctx.relay.cut()
  })

  fromMemory('a cached code redirects while the database is away; a miss is a quick 503; after the feed is back, held entries answer until a read succeeds', async ({ relay, srv, code }) => {
    await feedSettled(srv) // the create's own NOTIFY must not evict what the next GET caches
    assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 302)
    assert.ok(srv.service.deps.cache.get(code) !== undefined, 'now cached')
    const healthy = await call(srv.url, 'GET', '/healthz')
    assert.equal(healthy.body, { status: 'ok', database: 'ok', writes: 'ok', change_feed: 'up' })
    await relay.cut()
    for (let i = 0; i < 3; i++) {
      const hit = await call(srv.url, 'GET', `/r/${code}`)
      assert.is(hit.status, 302, 'a cached code keeps redirecting')
      const started = Date.now()
      const miss = await call(srv.url, 'GET', '/r/zzzzzzz9')
      assert.is(miss.status, 503)
      assert.ok(Date.now() - started < 1_000 + 1_000, `a miss waited ${Date.now() - started} ms`)
      await sleep(300)
    }
    const down = await call(srv.url, 'GET', '/healthz')
    assert.is(down.status, 503)
    assert.is(down.body.code, 'SERVICE_UNAVAILABLE')
    assert.is(down.body.database, 'failing')
    assert.is(down.body.change_feed, 'down')
    await relay.open()
    await until(10_000, () => srv.service.feed!.listening, { every: 50, why: () => 'the feed is back' })
    const { cache } = srv.service.deps
    assert.is(cache.get(code), undefined, 'a held entry is not answered from before a read')
    assert.ok(cache.stale(code) !== undefined, 'it is kept as the fallback of a read that fails')
    // The first reads after the feed is back fail (the database goes again at once): the held
    // entry answers until a read succeeds.
    await relay.cut()
    for (let i = 0; i < 3; i++) assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 302, 'served while reads fail')
    await relay.open()
    await until(10_000, () => srv.service.feed!.listening, { every: 50, why: () => 'the feed is back again' })
    await until(5_000, async () => (await call(srv.url, 'GET', `/r/${code}`)).status === 302 && cache.get(code) !== undefined, {
      why: () => 'a read succeeded and replaced the held entry',
    })
  })

  fromMemory('after the feed is back, a held entry answers at once when the read that should replace it hangs: a cached answer never waits out the time limit', async ({ relay, srv, code }) => {
    await until(5_000, async () => (await call(srv.url, 'GET', `/r/${code}`)).status === 302 && srv.service.deps.cache.get(code) !== undefined, { why: () => 'cached' })
    await relay.cut()
    await until(10_000, async () => (await call(srv.url, 'GET', '/healthz')).body.change_feed === 'down', { every: 100, why: () => 'the feed is down' })
    await relay.open()
    await until(10_000, () => srv.service.feed!.listening, { every: 50, why: () => 'the feed is back' })
    assert.is(srv.service.deps.cache.get(code), undefined, 'held, not fresh')
    relay.pause() // every read now hangs, on connections that stay open
    try {
      const started = Date.now()
      const res = await call(srv.url, 'GET', `/r/${code}`)
      const waited = Date.now() - started
      assert.is(res.status, 302)
      assert.ok(waited < 800, `waited ${waited} ms (DB_TIMEOUT_MS is 1000)`)
    } finally {
      relay.resume()
    }
  })

  fromMemory.run()
}
