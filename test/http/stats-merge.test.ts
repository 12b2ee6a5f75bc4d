// A month's merge beside users: its copy is made under the locks of a read, in a transaction of its
// own, and swapped in under the job's short locks; a deleted link's statistics are queued and
// deleted by the job later. Nothing a user does waits for the copy.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { exportDatabase } from '../../src/admin/export.js'
import { runStatsJob } from '../../src/stats/queries.js'
import { call, newLink, newUser, type User } from '../helpers/api.js'
import { freshDatabase, pgUnavailable, type FreshDatabase } from '../helpers/pg.js'
import { serverSuite, startServer, type TestServer } from '../helpers/server.js'
import { sleep, until } from '../helpers/wait.js'

type Sql = TestServer['service']['db']['sql']
const TABLES = ['visit_days', 'visit_referrers', 'visit_dims'] as const
const today = () => new Date().toISOString().slice(0, 10)
const daysOf = (month: string, n: number) => Array.from({ length: n }, (_, i) => `${month}-${String(i + 1).padStart(2, '0')}`)
const exists = async (sql: Sql, name: string) => (await sql<{ found: boolean }[]>`select to_regclass(${name}) is not null as found`)[0]!.found
/** A month's rows of the three tables, as text, in key order. */
const monthRows = async (sql: Sql, month: string) => {
  const from = `${month}-01`
  const to = new Date(Date.parse(from) + 32 * 86_400_000).toISOString().slice(0, 8) + '01'
  return Promise.all(TABLES.map(async (t) => (await sql<{ r: string }[]>`
    select row_to_json(x)::text as r from ${sql(t)} x where day >= ${from}::date and day < ${to}::date order by 1`).map((r) => r.r)))
}
/** The month's day partitions of a table. */
const dayPartitions = async (sql: Sql, table: string, month: string) =>
  (await sql<{ n: number }[]>`
    select count(*)::int as n from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = ${table}::regclass and c.relname ~ ${`^${table}_${month.replace('-', '')}[0-9]{2}$`}`)[0]!.n
const statRows = async (sql: Sql, code: string, month: string) => {
  await sql`insert into visit_days (code, day, humans, bots, uniques) select ${code}, d::date, 3, 1, 2 from unnest(${daysOf(month, 28)}::text[]) d`
  await sql`insert into visit_referrers (code, day, host, visits) select ${code}, d::date, 'news.example', 4 from unnest(${daysOf(month, 28)}::text[]) d`
  await sql`insert into visit_dims (code, day, dim, value, visits) select ${code}, d::date, 'os', 'Linux', 3 from unnest(${daysOf(month, 28)}::text[]) d`
}
/** The service's own job runs first 5 s after start (FIRST_RUN_MS), then every 10 minutes: these
 *  tests drive the job themselves, once that first run is over. */
const pastFirstRun = (startedAt: number) => sleep(Math.max(0, startedAt + 6_500 - Date.now()))

const test = serverSuite<{ user: User; startedAt: number }>('a month merged beside users; deleted links\' statistics deleted later')
test.before(async (ctx) => {
  ctx.startedAt = Date.now()
  ctx.user = await newUser(ctx.srv.url)
  await pastFirstRun(ctx.startedAt)
})

test('a change to a month\'s rows between its copy and its swap (a late flush adding to a day) drops the copy; a later run copies again, and the month holds exactly its days\' rows', async ({ srv, user }) => {
  const sql = srv.service.db.sql
  const link = await newLink(srv.url, user.token)
  await statRows(sql, link.code, '1986-06')
  // The job's locked step with its bounds: the days get their partitions, and June is prepared.
  await sql`select visit_stats_maintain('1980-01-01', '1986-07-02', '1986-07-01')`
  const [copied] = await sql.begin('isolation level repeatable read', (tx) => tx<{ m: string | null }[]>`select visit_stats_merge_copy()::text as m`)
  assert.is(copied!.m, '1986-06-01', 'the copy was made')
  await sql`update visit_days set humans = humans + 5 where code = ${link.code} and day = '1986-06-03'`
  const days = await monthRows(sql, '1986-06')
  assert.ok((await runStatsJob(sql, '1970-01-01', '1980-01-01', '1986-07-02', '1986-07-01')) !== undefined, 'the run is done')
  for (const t of TABLES) {
    assert.not.ok(await exists(sql, `${t}_198606`), `${t}: not swapped in`)
    assert.not.ok(await exists(sql, `${t}_198606_copy`), `${t}: the stale copy is gone`)
    assert.is(await dayPartitions(sql, t, '1986-06'), 30, `${t}: the days stay`)
  }
  assert.ok((await runStatsJob(sql, '1970-01-01', '1980-01-01', '1986-07-02', '1986-07-01')) !== undefined)
  for (const t of TABLES) {
    assert.ok(await exists(sql, `${t}_198606`), `${t}: the month is merged`)
    assert.is(await dayPartitions(sql, t, '1986-06'), 0, `${t}: no day of it left`)
    assert.not.ok(await exists(sql, `${t}_198606_copy`))
  }
  assert.equal(await monthRows(sql, '1986-06'), days, 'the month holds its days\' rows, the late change included')
  assert.is((await sql<{ n: number }[]>`select count(*)::int as n from visit_stats_merging`)[0]!.n, 0, 'nothing left to merge')
  await runStatsJob(sql, '1970-01-01', '1987-01-01', '1987-01-01', '1986-12-31')
  assert.not.ok(await exists(sql, 'visit_days_198606'), 'dropped past its retention')
})

test('a deleted link\'s statistics wait in the queue, shown by no read and no export, and are deleted by the job\'s next run', async ({ srv, user }) => {
  const sql = srv.service.db.sql
  const [gone, kept] = [await newLink(srv.url, user.token), await newLink(srv.url, user.token)]
  for (const code of [gone.code, kept.code]) {
    await sql`insert into visit_days (code, day, humans, bots) values (${code}, ${today()}, 2, 0)`
    await sql`insert into visit_referrers (code, day, host, visits) values (${code}, ${today()}, 'direct', 2)`
    await sql`insert into visit_dims (code, day, dim, value, visits) values (${code}, ${today()}, 'os', 'Linux', 2)`
  }
  assert.is((await call(srv.url, 'DELETE', `/api/v1/links/${gone.code}`, { token: user.token })).status, 204)
  assert.is((await call(srv.url, 'GET', `/api/v1/links/${gone.code}/stats`, { token: user.token })).status, 404)
  assert.equal((await sql<{ code: string }[]>`select code from visit_stats_orphans where code = ${gone.code}`).map((r) => r.code), [gone.code], 'queued')
  const exported: string[] = []
  await exportDatabase(sql, { sessions: false }, async (line) => {
    if (line.includes('"table":"visit_')) exported.push(line)
  })
  for (const t of TABLES) {
    assert.ok(exported.some((l) => l.includes(`"table":"${t}"`) && l.includes(kept.code)), `${t}: the live link's rows are exported`)
    assert.not.ok(exported.some((l) => l.includes(`"table":"${t}"`) && l.includes(gone.code)), `${t}: the deleted link's are not`)
  }
  const y = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)
  assert.ok((await runStatsJob(sql, y, '1980-01-01', y, today())) !== undefined)
  for (const t of TABLES) {
    const [n] = await sql<{ gone: number; kept: number }[]>`
      select count(*) filter (where code = ${gone.code})::int as gone, count(*) filter (where code = ${kept.code})::int as kept from ${sql(t)}`
    assert.equal(n, { gone: 0, kept: 1 }, t)
  }
  assert.is((await sql<{ n: number }[]>`select count(*)::int as n from visit_stats_orphans`)[0]!.n, 0, 'the queue is empty')
})

test.run()

// Two connections at once in a real PostgreSQL (the embedded engine runs one statement at a time).
const why = await pgUnavailable()
if (why !== undefined) {
  process.stdout.write(`stats-merge.test: the PostgreSQL part not run: ${why}\n`)
} else {
  const pg = suite<{ db: FreshDatabase; srv: TestServer; other: postgres.Sql; user: User; startedAt: number }>('a month merged on PostgreSQL while users read, flush and delete')
  pg.before(async (ctx) => {
    ctx.db = await freshDatabase()
    ctx.startedAt = Date.now()
    ctx.srv = await startServer({ DATABASE_URL: ctx.db.url, DATA_DIR: mkdtempSync(join(tmpdir(), 'unused-')) })
    ctx.other = postgres(ctx.db.url, { max: 2, onnotice: () => {} })
    ctx.user = await newUser(ctx.srv.url)
    await pastFirstRun(ctx.startedAt)
  })
  pg.after(async (ctx) => {
    await ctx.other?.end({ timeout: 1 })
    await ctx.srv?.close()
    await ctx.db?.drop()
  })

  pg('while a month\'s copy runs (slowed to some 4 s), a statistics read, a visit flush and a link deletion each answer within 2 s; the month is merged whole, and the deleted link\'s rows go at the next run', async ({ srv, other, user }) => {
    const sql = srv.service.db.sql
    const links = await Promise.all(Array.from({ length: 4 }, () => newLink(srv.url, user.token)))
    // The days' partitions first (the run of 1985-03-01), so that the rows go straight into them.
    await runStatsJob(sql, '1970-01-01', '1980-01-01', '1985-03-01', '1985-03-31')
    for (const l of links) await statRows(sql, l.code, '1985-03')
    const before = await monthRows(sql, '1985-03')
    // Every row of March 1985 written anywhere (the merge's copy) sleeps 30 ms: a check constraint
    // the partitions made LIKE visit_days take along. Nothing else writes March 1985.
    await other`create table test_knob (seconds float8 not null)`
    await other`create function test_slow(d date) returns boolean language plpgsql as $$
      begin
        if d >= '1985-03-01' and d < '1985-04-01' then perform pg_sleep(coalesce((select seconds from test_knob), 0)); end if;
        return true;
      end $$`
    await other`alter table visit_days add constraint test_slow check (test_slow(day))`
    await other`insert into test_knob values (0.03)`

    const started = performance.now()
    const job = runStatsJob(sql, '1970-01-01', '1980-01-01', '1985-04-02', '1985-04-01')
    await until(5_000, async () => {
      const [n] = await other<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where wait_event = 'PgSleep'`
      return n!.n > 0
    }, { every: 10, why: () => 'the copy never started' })
    const timed = async (what: string, action: () => Promise<unknown>) => {
      const t0 = performance.now()
      await action()
      const ms = performance.now() - t0
      assert.ok(ms < 2_000, `${what} took ${Math.round(ms)} ms while the copy ran`)
    }
    await timed('a statistics read', async () => {
      const res = await call(srv.url, 'GET', `/api/v1/links/${links[0].code}/stats`, { token: user.token })
      assert.is(res.status, 200)
    })
    await timed('a visit and its flush', async () => {
      assert.is((await call(srv.url, 'GET', `/r/${links[1].code}`, { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' } })).status, 302)
      await srv.service.deps.visits.flush()
    })
    await timed('a deletion', async () => {
      assert.is((await call(srv.url, 'DELETE', `/api/v1/links/${links[2].code}`, { token: user.token })).status, 204)
    })
    const [copying] = await other<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where wait_event = 'PgSleep'`
    assert.ok(copying!.n > 0, 'and the copy was still running')
    assert.ok((await job) !== undefined, 'the job did its work')
    assert.ok(performance.now() - started > 3_000, 'the copy did take its time')
    for (const t of TABLES) {
      assert.ok(await exists(sql, `${t}_198503`), `${t}: merged`)
      assert.is(await dayPartitions(sql, t, '1985-03'), 0, `${t}: no day of it left`)
    }
    assert.equal(await monthRows(sql, '1985-03'), before, 'the month holds exactly its days\' rows')
    await other`delete from test_knob`
    assert.ok((await runStatsJob(sql, '1970-01-01', '1980-01-01', '1985-04-02', '1985-04-01')) !== undefined)
    const [left] = await sql<{ n: number }[]>`
      select (select count(*) from visit_days where code = ${links[2].code}) + (select count(*) from visit_referrers where code = ${links[2].code})
           + (select count(*) from visit_dims where code = ${links[2].code}) as n`
    assert.is(Number(left!.n), 0, 'the deleted link\'s rows are gone')
    assert.equal((await monthRows(sql, '1985-03'))[0]!.length, 3 * 28, 'the others\' stay')
  })

  pg.run()
}
