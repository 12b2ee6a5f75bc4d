// Several nodes on one PostgreSQL behave as one service. Needs DATABASE_URL: the
// embedded database belongs to one process, so on it this file only says why it did nothing.
import { readdirSync } from 'node:fs'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, login, newLink, newUser, randomIp, type User } from '../helpers/api.js'
import { Relay } from '../helpers/relay.js'
import { MIGRATIONS_DIR } from '../../src/db/migrate.js'
import { feedSettled, startServer, type TestServer } from '../helpers/server.js'

import { until } from '../helpers/wait.js'

const WITHIN_MS = 1_000

const locationOn = async (srv: TestServer, code: string) => {
  const res = await call(srv.url, 'GET', `/r/${code}`)
  return res.status === 302 ? res.headers.get('location') : res.status
}

if (process.env.DATABASE_URL === undefined) {
  process.stdout.write('cluster.test: not run: multi-node tests need DATABASE_URL (npm test runs them in .ci/run)\n')
} else {
  const test = suite<{ a: TestServer; b: TestServer; c: TestServer; user: User }>('three nodes on one database')

  test.before(async (ctx) => {
    ;[ctx.a, ctx.b, ctx.c] = await Promise.all([startServer(), startServer(), startServer()])
    ctx.user = await newUser(ctx.a.url)
  })
  test.after(async (ctx) => {
    await Promise.all([ctx.a, ctx.b, ctx.c].map((s) => s?.close()))
  })

  test('migrations ran once although three nodes started together', async ({ a }) => {
    const rows = await a.service.db.sql<{ version: number }[]>`select version from schema_migrations order by version`
    const files = readdirSync(MIGRATIONS_DIR).filter((f) => /^\d{4}_.*\.sql$/.test(f)).sort()
    assert.equal(rows.map((r) => r.version), files.map((f) => Number(f.slice(0, 4))))
  })

  // Sessions are in the database; no node caches a session
  test('a session made on A works on B and C; logout on B is refused on A at once', async ({ a, b, c, user }) => {
    const token = await login(a.url, user.username, user.password)
    for (const srv of [b, c]) assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token })).status, 200)
    assert.is((await call(b.url, 'POST', '/api/v1/auth/logout', { token })).status, 204)
    const after = await call(a.url, 'GET', '/api/v1/users/me', { token })
    assert.is(after.status, 401)
    assert.is(after.body.code, 'UNAUTHORIZED')
  })

  // PATCH takes effect at once on its node and within a second on every other node
  test('a PATCH on A redirects to the new URL on C within a second', async ({ a, c, user }) => {
    const link = await newLink(a.url, user.token, 'https://old.example/')
    assert.is(await locationOn(c, link.code), 'https://old.example/') // now cached on C
    assert.is(await locationOn(c, link.code), 'https://old.example/')
    const res = await call(a.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body: { url: 'https://new.example/' } })
    assert.is(res.status, 200)
    assert.is(await locationOn(a, link.code), 'https://new.example/')
    await until(WITHIN_MS, async () => (await locationOn(c, link.code)) === 'https://new.example/')
  })

  test('a DELETE on C answers 404 on A within a second', async ({ a, c, user }) => {
    const link = await newLink(a.url, user.token)
    assert.is(await locationOn(a, link.code), 'https://example.com/')
    assert.is((await call(c.url, 'DELETE', `/api/v1/links/${link.code}`, { token: user.token })).status, 204)
    await until(WITHIN_MS, async () => (await locationOn(a, link.code)) === 404)
  })

  // A create with a custom code clears any negative entry for it on every node
  test('a code remembered as unknown on B redirects within a second once A creates it', async ({ a, b, user }) => {
    const code = `Cc${Date.now().toString(36).slice(-6)}`
    assert.is(await locationOn(b, code), 404)
    const res = await call(a.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://custom.example/', code } })
    assert.is(res.status, 201)
    await until(WITHIN_MS, async () => (await locationOn(b, code)) === 'https://custom.example/')
  })

  // contract §7: across several nodes the limit holds for the cluster
  test('six logins from one address spread over three nodes give exactly one 429', async ({ a, b, c, user }) => {
    // The bucket refills one token per 200 ms, so only a burst that ends within 200 ms of its
    // start proves the count; a slower one (a busy machine) is tried again from a fresh address.
    for (let attempt = 1; ; attempt++) {
      const ip = randomIp()
      const started = performance.now()
      const statuses = await Promise.all(
        [a, b, c, a, b, c].map(async (srv) => {
          const res = await call(srv.url, 'POST', '/api/v1/auth/login', { ip, body: { username: user.username, password: 'wrong password' } })
          return res.status
        }),
      )
      if (performance.now() - started >= 200 && attempt < 5) continue
      assert.equal(statuses.filter((s) => s === 429).length, 1, statuses.join(','))
      assert.equal(statuses.filter((s) => s === 401).length, 5, statuses.join(','))
      return
    }
  })

  test('visits served by all three nodes sum exactly after the flush', async ({ a, b, c, user }) => {
    const link = await newLink(a.url, user.token)
    const per = [7, 5, 3]
    const nodes = [a, b, c]
    await Promise.all(nodes.map(async (srv, i) => {
      for (let n = 0; n < per[i]!; n++) assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).status, 302)
    }))
    await Promise.all(nodes.map((srv) => srv.service.deps.visits.flush()))
    const res = await call(b.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })
    assert.is(res.body.visits, 15)
  })

  // When the listening connection drops, the node clears its cache and reconnects
  test('after its listening connection is killed, a node never serves a stale redirect for more than a second', async ({ a, c, user }) => {
    const link = await newLink(a.url, user.token, 'https://before.example/')
    await feedSettled(c)
    assert.is(await locationOn(c, link.code), 'https://before.example/')
    const sql = a.service.db.sql
    const [killed] = await sql<{ n: number }[]>`
      select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity
      where application_name = ${c.service.feed!.applicationName}) t`
    assert.is(killed!.n, 1)
    // Change the link while C's feed may be down: C must not keep the old Location.
    await call(a.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body: { url: 'https://after.example/' } })
    await until(WITHIN_MS, async () => (await locationOn(c, link.code)) === 'https://after.example/')
    await until(5_000, async () => c.service.feed!.listening)
    // Back to normal: the cache is on again and still correct.
    await call(a.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body: { url: 'https://again.example/' } })
    await until(WITHIN_MS, async () => (await locationOn(c, link.code)) === 'https://again.example/')
  })

  test.run()

  // A lost notification can never leave a stale redirect behind — also when the
  // listening connection dies silently (no RST), which only its own notice not coming back reveals.
  const silent = suite<{ a: TestServer; c: TestServer; relay: Relay; user: User }>('a node whose database goes silent')

  silent.before(async (ctx) => {
    const { relay, url } = await Relay.to(process.env.DATABASE_URL!)
    ctx.relay = relay
    ;[ctx.a, ctx.c] = await Promise.all([startServer(), startServer({ DATABASE_URL: url, CACHE_STALE_MS: '0' })])
    ctx.user = await newUser(ctx.a.url)
  })
  silent.after(async (ctx) => {
    ctx.relay.resume()
    await Promise.all([ctx.a.close(), ctx.c.close()])
    await ctx.relay.cut()
  })

  silent('a silent listener turns the cache off within one probe; when it answers again, redirects are fresh', async ({ a, c, relay, user }) => {
    const link = await newLink(a.url, user.token, 'https://before.example/')
    await feedSettled(c)
    assert.is(await locationOn(c, link.code), 'https://before.example/')
    assert.is(c.service.deps.cache.get(link.code), 'https://before.example/', 'cached on C')
    relay.pause()
    await until(6_000, async () => !c.service.feed!.listening)
    assert.is(c.service.deps.cache.get(link.code), undefined, 'nothing cached to serve stale')
    await call(a.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body: { url: 'https://after.example/' } })
    relay.resume()
    await until(10_000, async () => c.service.feed!.listening)
    await until(WITHIN_MS, async () => (await locationOn(c, link.code)) === 'https://after.example/')
  })

  silent.run()
}
