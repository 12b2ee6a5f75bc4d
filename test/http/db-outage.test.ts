// contract §2: 503 SERVICE_UNAVAILABLE while the database is unreachable; the service keeps
// running and recovers by itself. The database is reached through a TCP relay the test cuts.
// Needs DATABASE_URL (the embedded database cannot become unreachable).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, type User } from '../helpers/api.js'
import { Relay } from '../helpers/relay.js'
import { startServer, type TestServer } from '../helpers/server.js'

if (process.env.DATABASE_URL === undefined) {
  process.stdout.write('db-outage.test: not run: needs DATABASE_URL (npm test runs it in .ci/run)\n')
} else {
  const databaseUrl = process.env.DATABASE_URL
  const test = suite<{ relay: Relay; srv: TestServer; user: User; code: string }>('database outage')

  test.before(async (ctx) => {
    const { relay, url } = await Relay.to(databaseUrl)
    ctx.relay = relay
    // No cache: every redirect must ask the database.
    ctx.srv = await startServer({ DATABASE_URL: url, CACHE_MAX_BYTES: '0' })
    ctx.user = await newUser(ctx.srv.url)
    ctx.code = (await newLink(ctx.srv.url, ctx.user.token)).code
  })
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
    const start = Date.now()
    let status = 0
    while (Date.now() - start < 10_000) {
      status = (await call(srv.url, 'GET', `/r/${code}`)).status
      if (status === 302) break
      await new Promise((r) => setTimeout(r, 100))
    }
    assert.is(status, 302)
    assert.is((await call(srv.url, 'GET', '/healthz')).status, 200)
  })

  test.run()
}
