// A visit flush that fails after its COMMIT reached the database (the connection cut while the
// answer was on its way) is tried again under the same id, and adds nothing twice: counted equals
// served. Needs DATABASE_URL (the relay stands between the service and PostgreSQL).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser } from '../helpers/api.js'
import { Relay } from '../helpers/relay.js'
import { startServer, type TestServer } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

if (process.env.DATABASE_URL === undefined) {
  process.stdout.write('flush-retry.test: not run: needs DATABASE_URL (a relay cuts the connection to PostgreSQL)\n')
} else {
  const databaseUrl = process.env.DATABASE_URL
  const test = suite<{ relay: Relay; srv: TestServer }>('visit flushes cut at their commit')
  test.before(async (ctx) => {
    const { relay, url } = await Relay.to(databaseUrl)
    ctx.relay = relay
    // Flushes only when the test says so.
    ctx.srv = await startServer({ DATABASE_URL: url, VISIT_FLUSH_MS: '60000' })
  })
  test.after(async (ctx) => {
    await ctx.srv.close()
    await ctx.relay.cut()
  })

  test('a flush whose commit answer is lost is retried under its id: counted equals served', async ({ relay, srv }) => {
    const user = await newUser(srv.url)
    const { code } = await newLink(srv.url, user.token)
    const sql = srv.service.db.sql
    const visits = async () => (await sql<{ visits: number; humans: number | null }[]>`
      select l.visits::int as visits, (select sum(humans)::int from visit_days d where d.code = l.code) as humans
      from links l where l.code = ${code}`)[0]!
    let served = 0
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 40; i++) {
        assert.is((await call(srv.url, 'GET', `/r/${code}`, { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0' } })).status, 302)
        served++
      }
      relay.cutAtAnswer('COMMIT\0')
      await srv.service.deps.visits.flush()
      await srv.service.deps.visits.flush()
      assert.equal(await visits(), { visits: served, humans: served }, `round ${round}`)
      // The logger writes in batches: wait for the line.
      await until(2_000, () => srv.logs.some((l) => l.includes('visit flush failed at its commit')), { why: () => 'the cut met the flush at its commit' })
    }
  })

  test.run()
}
