// Connections killed under load: the driver's stray errors (the array-type query of a new
// connection, an error with no query in flight) must never end the process or a worker. The
// database's own pg_terminate_backend, every 100 ms, on every connection of the service.
import postgres from 'postgres'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, randomIp } from '../helpers/api.js'
import { freshDatabase, pgUnavailable, type FreshDatabase } from '../helpers/pg.js'
import { spawnServer } from '../helpers/process.js'
import { sleep, until } from '../helpers/wait.js'

const KILL_EVERY_MS = 100
const LOAD_MS = 4_000
const CLIENTS = 12

const why = await pgUnavailable()
if (why !== undefined) {
  process.stdout.write(`db-kills.test: not run: it terminates PostgreSQL backends, which the embedded engine does not have; ${why}\n`)
} else {
  const test = suite<{ db: FreshDatabase; admin: postgres.Sql }>('connections killed every 100 ms')
  test.before(async (ctx) => {
    ctx.db = await freshDatabase()
    ctx.admin = postgres(ctx.db.url, { max: 1, onnotice: () => {} })
  })
  test.after(async (ctx) => {
    await ctx.admin?.end({ timeout: 1 })
    await ctx.db?.drop()
  })

  for (const workers of [1, 2]) {
    test(`WORKERS=${workers}: no process or worker exits while its connections are killed under load`, async ({ db, admin }) => {
      let kills: NodeJS.Timeout | undefined
      const srv = await spawnServer({ DATABASE_URL: db.url, WORKERS: String(workers), CACHE_MAX_BYTES: '0', VISIT_FLUSH_MS: '100' }, workers)
      try {
        const user = await newUser(srv.url)
        const { code } = await newLink(srv.url, user.token)
        let exited = false
        void srv.exited.then(() => (exited = true))
        kills = setInterval(() => {
          admin`
            select pg_terminate_backend(pid) from pg_stat_activity
            where datname = current_database() and pid <> pg_backend_pid() and application_name like 'link-service%'`.catch(() => {})
        }, KILL_EVERY_MS)
        const statuses = new Map<number, number>()
        const end = Date.now() + LOAD_MS
        await Promise.all(
          Array.from({ length: CLIENTS }, async (_, i) => {
            for (let n = 0; Date.now() < end && !exited; n++) {
              const res = await ((n + i) % 3 === 0
                ? call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: `https://example.com/${n}` }, ip: randomIp() })
                : call(srv.url, 'GET', `/r/${code}`)
              ).catch((err: Error) => {
                // a connection the service dropped: say what it logged, and whether it exited
                throw new Error(`a request failed (${String(err.cause ?? err.message)}); exited: ${exited}; ${srv.logSoFar().slice(-3000)}`)
              })
              statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
            }
          }),
        )
        clearInterval(kills)
        assert.not.ok(exited, `the service exited; ${srv.logSoFar()}`)
        assert.not.ok(srv.lines.some((l) => l.msg === 'worker died; restarting it'), srv.logSoFar())
        assert.ok((statuses.get(302) ?? 0) > 0, `some redirects were served: ${JSON.stringify([...statuses])}`)
        // No valid session is refused (401) and nothing fails: a statement after one cut mid-rows
        // once came back with holes (test/http/driver-rows.test.ts). An answer outside these says
        // what the service logged at error level (a 500's cause).
        const errors = () => srv.lines.filter((l) => (l as { level?: string }).level === 'error').slice(-5).map((l) => JSON.stringify(l)).join('\n')
        for (const status of statuses.keys()) assert.ok([201, 302, 409, 503].includes(status), `only answers (a link limit among them) or 503: ${JSON.stringify([...statuses])}; errors logged:\n${errors()}`)
        // It recovers by itself once the kills stop (a busy machine may take a while: each worker's
        // pool watchdog, the change feed's back-off, five seconds of failed link writes).
        let last = ''
        await until(20_000, async () => {
          const res = await call(srv.url, 'GET', '/healthz')
          last = `${res.status} ${res.text}`
          return res.status === 200
        }, { every: 200, why: () => `last answer: ${last}; ${srv.logSoFar().slice(-3000)}` })
        await sleep(200)
        assert.not.ok(exited)
      } finally {
        clearInterval(kills) // also when a request failed: the next test's server must not start under the kills
        srv.child.kill('SIGKILL')
        await srv.exited
      }
    })
  }

  test.run()
}
