// Maintenance never fails a user's request. The statistics job takes its table locks first, in
// the order every user statement takes them, with a short lock_timeout, and gives way when it
// cannot have them (sql/0021); a user's statement that still loses a deadlock is run again by the
// service (src/db/retry.ts) instead of answering 503.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { runStatsJob } from '../../src/stats/queries.js'
import { call, newLink, newUser, type User } from '../helpers/api.js'
import { freshDatabase, pgUnavailable, type FreshDatabase } from '../helpers/pg.js'
import { serverSuite, startServer, type TestServer } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

const DAY_MS = 86_400_000
/** Days of long ago, for the job to make partitions of on every run (DDL under its locks) without
 *  touching what other tests keep: nothing is dropped before 1980, and only 1990's months merge. */
const PAST = Date.parse('1990-01-01')
const pastDay = (i: number) => new Date(PAST + i * DAY_MS).toISOString().slice(0, 10)
/** The job's run making day `i`'s partitions: keeps everything from 1980, reduces nothing. */
const jobMaking = (sql: TestServer['service']['db']['sql'], i: number) => runStatsJob(sql, '1970-01-01', '1980-01-01', pastDay(i), pastDay(i))
/** The job's run dropping what jobMaking made. */
const jobDroppingPast = (sql: TestServer['service']['db']['sql']) => runStatsJob(sql, '1970-01-01', '1991-01-01', '1991-01-01', '1990-12-31')
const hasPartition = async (sql: TestServer['service']['db']['sql'], name: string) =>
  (await sql<{ found: boolean }[]>`select to_regclass(${name}) is not null as found`)[0]!.found

// Creating links faster than an account's creation allowance refills (LINK_CREATE_*): the churn
// is about deletions meeting the job, not about that limit.
const CHURN_ENV = { LINK_CREATE_PER_MINUTE: '100000', LINK_CREATE_BURST: '100000' }

const churn = serverSuite('maintenance under link churn', CHURN_ENV)

churn('8 clients of 4 accounts create and delete links while the statistics job makes partitions over and over: no 5xx, and the job gets its work done', async ({ srv }) => {
  const users = await Promise.all(Array.from({ length: 4 }, () => newUser(srv.url)))
  const sql = srv.service.db.sql
  const statuses = new Map<number, number>()
  const jobRuns: Array<number | undefined> = []
  const endAt = Date.now() + 3_000
  const job = (async () => {
    for (let i = 0; Date.now() < endAt; i++) jobRuns.push(await jobMaking(sql, i))
  })()
  await Promise.all(
    Array.from({ length: 8 }, async (_, c) => {
      const { token } = users[c % users.length]!
      while (Date.now() < endAt) {
        const made = await call(srv.url, 'POST', '/api/v1/links', { token, body: { url: `https://example.com/churn/${c}` } })
        statuses.set(made.status, (statuses.get(made.status) ?? 0) + 1)
        if (made.status !== 201) continue
        const gone = await call(srv.url, 'DELETE', `/api/v1/links/${made.body.code}`, { token })
        statuses.set(gone.status, (statuses.get(gone.status) ?? 0) + 1)
      }
    }),
  )
  await job
  const shown = JSON.stringify(Object.fromEntries(statuses))
  assert.equal([...statuses.keys()].sort(), [201, 204], `answers by status: ${shown}`)
  assert.ok(statuses.get(204)! >= 8, `some churn happened: ${shown}`)
  const done = jobRuns.filter((r) => r !== undefined).length
  assert.ok(done >= 1, `the job did its work in ${done} of ${jobRuns.length} runs`)
  assert.ok(await hasPartition(sql, `visit_dims_${pastDay(0).replaceAll('-', '')}`) || (await hasPartition(sql, 'visit_dims_199001')), 'its partitions are there')
  await jobDroppingPast(sql)
  assert.not.ok((await hasPartition(sql, `visit_dims_${pastDay(0).replaceAll('-', '')}`)) || (await hasPartition(sql, 'visit_dims_199001')), 'and are gone again')
})

churn('visits flow while the statistics job makes partitions over and over: no 5xx, the job gets its work done, and every visit is counted once, in the totals and in the day', async ({ srv }) => {
  const user = await newUser(srv.url)
  const links = await Promise.all(Array.from({ length: 4 }, (_, i) => newLink(srv.url, user.token, `https://example.com/visited/${i}`)))
  const sql = srv.service.db.sql
  const served = new Map<string, number>()
  const statuses = new Map<number, number>()
  const jobRuns: Array<number | undefined> = []
  const endAt = Date.now() + 3_000
  const job = (async () => {
    for (let i = 100; Date.now() < endAt; i++) jobRuns.push(await jobMaking(sql, i))
  })()
  await Promise.all(
    Array.from({ length: 8 }, async (_, c) => {
      for (let n = 0; Date.now() < endAt; n++) {
        const { code } = links[(c + n) % links.length]!
        const res = await call(srv.url, 'GET', `/r/${code}`, { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0' } })
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        if (res.status === 302) served.set(code, (served.get(code) ?? 0) + 1)
      }
    }),
  )
  await job
  await srv.service.deps.visits.flush()
  assert.equal([...statuses.keys()], [302], JSON.stringify(Object.fromEntries(statuses)))
  assert.ok(jobRuns.some((r) => r !== undefined), `the job did its work in some of ${jobRuns.length} runs`)
  for (const { code } of links) {
    const [row] = await sql<{ visits: number; day: number }[]>`
      select l.visits::int as visits, coalesce((select sum(d.humans + d.bots)::int from visit_days d where d.code = l.code), 0) as day
      from links l where l.code = ${code}`
    assert.equal([row!.visits, row!.day], [served.get(code) ?? 0, served.get(code) ?? 0], code)
  }
  await jobDroppingPast(sql)
})

churn.run()

// Two connections in a real PostgreSQL (the embedded engine has one): on a fresh database, whatever the pass.
const why = await pgUnavailable()
if (why !== undefined) {
  process.stdout.write(`maintenance-yields.test: the PostgreSQL part not run: ${why}\n`)
} else {
  const pg = suite<{ db: FreshDatabase; srv: TestServer; other: postgres.Sql; user: User }>('maintenance on PostgreSQL: yielding, and a deadlock run again')
  pg.before(async (ctx) => {
    ctx.db = await freshDatabase()
    ctx.srv = await startServer({ DATABASE_URL: ctx.db.url, DATA_DIR: mkdtempSync(join(tmpdir(), 'unused-')) })
    ctx.other = postgres(ctx.db.url, { max: 2, onnotice: () => {} })
    ctx.user = await newUser(ctx.srv.url)
  })
  pg.after(async (ctx) => {
    await ctx.other?.end({ timeout: 1 })
    await ctx.srv?.close()
    await ctx.db?.drop()
  })

  pg('the statistics job gives way at once to a user holding one of its tables, doing nothing, and does its work once the table is free', async ({ srv, other }) => {
    const sql = srv.service.db.sql
    const part = `visit_days_${pastDay(40).replaceAll('-', '')}`
    await other.begin(async (tx) => {
      // What a link's deletion holds while its trigger goes through the statistics tables.
      await tx`lock table visit_dims in row exclusive mode`
      const started = performance.now()
      assert.is(await jobMaking(sql, 40), undefined, 'it yielded')
      const tookMs = performance.now() - started
      assert.ok(tookMs < 900, `it gave up within its lock_timeout, below deadlock_timeout: ${tookMs} ms`)
      assert.not.ok(await hasPartition(sql, part), 'and did nothing')
    })
    assert.is(await jobMaking(sql, 40), 0, 'the table free, it does its work')
    assert.ok(await hasPartition(sql, part))
    await jobDroppingPast(sql)
  })

  pg("a deadlock inside a user's delete is run again by the service: 204, not 503", async ({ srv, other, user }) => {
    const link = await newLink(srv.url, user.token)
    let answer: Promise<Awaited<ReturnType<typeof call>>> | undefined
    await other.begin(async (tx) => {
      // The other side takes first what the delete's trigger will need (the delete waits holding
      // the link's row), then asks for that row: a cycle, which PostgreSQL ends by failing the side
      // that has waited longer, the delete. The trigger queues the link's statistics for the job.
      await tx`lock table visit_stats_orphans in share mode`
      answer = call(srv.url, 'DELETE', `/api/v1/links/${link.code}`, { token: user.token })
      await until(5_000, async () => {
        const [waiting] = await other<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where wait_event_type = 'Lock' and query like '%tombstone_links%' and pid <> pg_backend_pid()`
        return waiting!.n > 0
      }, { every: 10, why: () => 'the delete never waited on the statistics table' })
      await tx`select 1 from links where code = ${link.code} for update`
    })
    const res = await answer!
    assert.is(res.status, 204, `answered ${res.status} ${res.text}`)
    assert.ok(srv.logs.some((line) => line.includes('running it again') && line.includes('40P01')), 'the delete did lose a deadlock, and was run again')
    assert.is((await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })).status, 404)
  })

  pg.run()
}
