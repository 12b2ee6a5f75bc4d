// Connections that close under write load must never crash the process. The `postgres`
// driver 3.4.9 deferred a small write with setImmediate and threw from it once the socket had
// closed (porsager/postgres #1066, #1154, #1208): an uncaught TypeError that killed the service.
// scripts/patch-postgres.mjs (npm ci's postinstall) mends it; this test fails without it.
// Needs DATABASE_URL: the connections are cut through a TCP relay.
import postgres from 'postgres'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newUser } from '../helpers/api.js'
import { Relay } from '../helpers/relay.js'
import { startServer } from '../helpers/server.js'
import { sleep, until } from '../helpers/wait.js'

if (process.env.DATABASE_URL === undefined) {
  process.stdout.write('driver-close.test: not run: needs DATABASE_URL (npm test runs it in .ci/run)\n')
} else {
  const databaseUrl = process.env.DATABASE_URL

  test('connections reset under write load: no uncaught error, answers are 2xx or 503 within the limit, then it recovers', async () => {
    const { relay, url } = await Relay.to(databaseUrl)
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    const escaped: unknown[] = []
    const record = (err: unknown) => escaped.push(err)
    process.on('uncaughtException', record)
    process.on('unhandledRejection', record)
    let srv: Awaited<ReturnType<typeof startServer>> | undefined
    try {
      // 240 creates in a few seconds, far past an account's creation allowance: the test is about
      // connections cut under write load, not that limit.
      const server = await startServer({ DATABASE_URL: url, DB_TIMEOUT_MS: '2000', LINK_CREATE_PER_MINUTE: '100000', LINK_CREATE_BURST: '100000' })
      srv = server
      const user = await newUser(server.url)
      const statuses = new Map<number, number>()
      let slowest = 0
      for (let round = 0; round < 12; round++) {
        // Transactions of small statements in flight on every pooled connection, then the
        // connections reset: by the network (relay), or by the server (pg_terminate_backend).
        const creates = Array.from({ length: 20 }, async (_, i) => {
          const started = Date.now()
          const res = await call(server.url, 'POST', '/api/v1/links', { token: user.token, body: { url: `https://example.com/${round}/${i}` } })
          slowest = Math.max(slowest, Date.now() - started)
          return res
        })
        await sleep(1 + (round % 4))
        if (round % 2 === 0) relay.drop()
        else await admin`select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and application_name = 'link-service' and pid <> pg_backend_pid()`
        for (const res of await Promise.all(creates)) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        // room under the 50-link cap (their checks' rows first: they reference the links)
        await admin`delete from link_checks where code in (select code from links where user_id = ${user.id})`
        await admin`delete from links where user_id = ${user.id}`
      }
      assert.equal(escaped.length, 0, `an error escaped every caller: ${escaped.map((e) => (e instanceof Error ? e.stack : String(e))).join('\n')}`)
      for (const status of statuses.keys()) assert.ok(status === 201 || status === 503, `status ${status}`)
      assert.ok((statuses.get(503) ?? 0) > 0, `the resets were felt: ${JSON.stringify([...statuses])}`)
      assert.ok(slowest < 2_000 + 1_500, `slowest answer ${slowest} ms, limit 2000 ms`)
      const create = () => call(server.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/after' } })
      await until(15_000, async () => (await create()).status === 201, { every: 200 })
    } finally {
      process.off('uncaughtException', record)
      process.off('unhandledRejection', record)
      await srv?.close() // a server that failed to start must not keep the relay (and the test) alive
      await relay.cut()
      await admin.end()
    }
  })

  test.run()
}
