// Past one machine on PostgreSQL's own means (docs/scale.md): a cluster of its own
// (scripts/cluster.mjs: primary, synchronous standby, read replica, PgBouncer in transaction
// mode, three nodes and HAProxy), and nodes in this process pointed at its parts. Runs in the
// PostgreSQL passes of npm test (DATABASE_URL set), where .ci/run installs PgBouncer and HAProxy.
import postgres from 'postgres'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, type User } from '../helpers/api.js'
import { metricValue } from '../helpers/metrics.js'
import { clusterUnavailable, failoverDrill, startCluster, type ClusterState } from '../helpers/pg-cluster.js'
import { feedSettled, startServer, type TestServer } from '../helpers/server.js'
import { TEST_ENV } from '../helpers/test-env.js'
import { until } from '../helpers/wait.js'

const locationOn = async (srv: { url: string }, code: string) => {
  const res = await call(srv.url, 'GET', `/r/${code}`)
  return res.status === 302 ? res.headers.get('location') : res.status
}

const why = process.env.DATABASE_URL === undefined ? 'they need the PostgreSQL pass (DATABASE_URL)' : clusterUnavailable()
if (why !== undefined) {
  process.stdout.write(`scale.test: not run: ${why}\n`)
} else {
  type Ctx = { cluster: Awaited<ReturnType<typeof startCluster>>; state: ClusterState; servers: TestServer[]; user: User }
  const test = suite<Ctx>('replicas, a pooler and a balancer')
  const node = async (ctx: Ctx, env: Record<string, string>) => {
    const srv = await startServer({ METRICS_PORT: '0', ...env })
    ctx.servers.push(srv)
    return srv
  }

  test.before(async (ctx) => {
    ctx.servers = []
    try {
      ctx.cluster = await startCluster({ nodes: 3, nodeEnv: { ...TEST_ENV, LOG_LEVEL: 'warn' } })
      ctx.state = ctx.cluster.state
      ctx.user = await newUser(ctx.state.urls.balancer!)
    } catch (err) {
      // uvu swallows what a before hook throws (the suite shows "(0 / 6)"): say it here.
      process.stdout.write(`scale.test: the cluster did not start: ${err instanceof Error ? err.stack : String(err)}\n`)
      throw err
    }
  })
  test.after(async (ctx) => {
    await Promise.all((ctx.servers ?? []).map((s) => s.close()))
    await ctx.cluster?.stop()
  })

  test('the cluster script brings up a synchronous standby, an asynchronous replica, PgBouncer, three nodes and a balancer', async ({ state, user }) => {
    const sql = postgres(state.urls.primary, { max: 1, onnotice: () => {} })
    try {
      const rows = await sql<Array<{ application_name: string; sync_state: string }>>`
        select application_name, sync_state from pg_stat_replication where state = 'streaming' order by application_name`
      assert.equal(rows.map((r) => `${r.application_name}:${r.sync_state}`), ['replica:async', 'standby:sync'])
    } finally {
      await sql.end({ timeout: 1 })
    }
    // Every node answers behind the balancer, and a link made through one redirects through each.
    const link = await newLink(state.urls.balancer!, user.token, 'https://balanced.example/')
    for (const url of [...state.urls.nodes, state.urls.balancer!]) assert.is(await locationOn({ url }, link.code), 'https://balanced.example/', url)
  })

  test('a link created through one node redirects (302) through another whose misses go to a lagging replica', async (ctx) => {
    const { state, user, cluster } = ctx
    cluster.script.pauseReplica(state, true)
    try {
      const link = await newLink(state.urls.nodes[0]!, user.token, 'https://fresh.example/')
      // Started after the create, this node never heard of the new code, so it does not know to
      // skip the replica for it (as after a restart, or a notice lost while its feed was down).
      const reader = await node(ctx, { DATABASE_URL: state.urls.pooler, DATABASE_PREPARE: 'off', DATABASE_LISTEN_URL: state.urls.primary, DATABASE_READ_URL: state.urls.replica })
      await reader.service.deps.reads.ready()
      const replica = postgres(state.urls.replica, { max: 1, onnotice: () => {} })
      const [known] = await replica<Array<{ n: number }>>`select count(*)::int as n from links where code = ${link.code}`
      await replica.end({ timeout: 1 })
      assert.is(known!.n, 0, 'the replica lags: it does not know the new link')
      const before = await metricValue(reader, 'link_service_db_reads_total{pool="replica1"}')
      assert.is(await locationOn(reader, link.code), 'https://fresh.example/')
      assert.is(await metricValue(reader, 'link_service_db_reads_total{pool="replica1"}'), before + 1, 'the miss asked the replica first')
      // Not remembered as unknown either: it redirects again, from the cache.
      assert.is(await locationOn(reader, link.code), 'https://fresh.example/')
      // Its statistics too: the replica does not know the link, the primary answers.
      assert.is((await call(reader.url, 'GET', `/api/v1/links/${link.code}/stats`, { token: user.token })).status, 200)
    } finally {
      cluster.script.pauseReplica(state, false)
    }
  })

  test('a replica that cannot be reached is skipped: reads go to the one that answers; with none left, to the primary', async (ctx) => {
    const { state, user } = ctx
    const link = await newLink(state.urls.nodes[1]!, user.token, 'https://skipped.example/')
    const dead = `postgres://postgres@127.0.0.1:${state.port + 9}/link_service`
    const base = { DATABASE_LISTEN_URL: state.urls.primary, DATABASE_URL: state.urls.pooler, DATABASE_PREPARE: 'off' }
    const [one, none] = [await node(ctx, { ...base, DATABASE_READ_URL: `${dead}, ${state.urls.replica}` }), await node(ctx, { ...base, DATABASE_READ_URL: dead })]
    await Promise.all([one.service.deps.reads.ready(), none.service.deps.reads.ready()])
    assert.is(await metricValue(one, 'link_service_db_read_pool_up{pool="replica1"}'), 0)
    assert.is(await metricValue(one, 'link_service_db_read_pool_up{pool="replica2"}'), 1)
    // The link was made before these nodes started: each asks a replica first, if one answers.
    await until(5_000, async () => (await locationOn(one, link.code)) === 'https://skipped.example/')
    assert.is((await call(one.url, 'GET', `/api/v1/links/${link.code}/stats`, { token: user.token })).status, 200)
    assert.is(await metricValue(one, 'link_service_db_reads_total{pool="replica1"}'), 0)
    assert.is(await metricValue(one, 'link_service_db_reads_total{pool="replica2"}'), 2)
    assert.is(await locationOn(none, link.code), 'https://skipped.example/')
    assert.is((await call(none.url, 'GET', `/api/v1/links/${link.code}/stats`, { token: user.token })).status, 200)
    assert.is(await metricValue(none, 'link_service_db_reads_total{pool="replica1"}'), 0)
    assert.is(await metricValue(none, 'link_service_db_reads_total{pool="primary"}'), 2)
  })

  test("behind PgBouncer in transaction mode, a PATCH through one node reaches another node's cached redirect", async (ctx) => {
    const { state, user } = ctx
    const env = { DATABASE_URL: state.urls.pooler, DATABASE_PREPARE: 'off', DATABASE_LISTEN_URL: state.urls.primary }
    const [a, b] = [await node(ctx, env), await node(ctx, env)]
    assert.is(b.service.feed!.listening, true)
    const link = await newLink(a.url, user.token, 'https://old.example/')
    await feedSettled(b)
    assert.is(await locationOn(b, link.code), 'https://old.example/')
    assert.is(b.service.deps.cache.get(link.code), 'https://old.example/', 'cached on B')
    assert.is((await call(a.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body: { url: 'https://new.example/' } })).status, 200)
    await until(1_000, async () => (await locationOn(b, link.code)) === 'https://new.example/')
  })

  test('behind PgBouncer in transaction mode without DATABASE_LISTEN_URL, the change feed is reported down, and nothing is cached', async (ctx) => {
    const { state, user } = ctx
    const a = await node(ctx, { DATABASE_URL: state.urls.pooler, DATABASE_PREPARE: 'off', DATABASE_LISTEN_URL: state.urls.primary })
    const blind = await node(ctx, { DATABASE_URL: state.urls.pooler, DATABASE_PREPARE: 'off' })
    assert.is(blind.service.feed!.listening, false)
    const health = await call(blind.url, 'GET', '/healthz')
    assert.is(health.status, 200)
    assert.is(health.body.change_feed, 'down')
    assert.is(health.body.status, 'degraded')
    assert.is(await metricValue(blind, 'link_service_change_feed_up'), 0)
    assert.ok((await metricValue(blind, 'link_service_change_feed_losses_total')) >= 1)
    assert.ok(blind.logs.some((l) => l.includes('DATABASE_LISTEN_URL')), 'the log says what to set')
    // Its notices lost, it never serves a stale redirect: a PATCH elsewhere shows at once.
    const link = await newLink(a.url, user.token, 'https://one.example/')
    assert.is(await locationOn(blind, link.code), 'https://one.example/')
    assert.is((await call(a.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body: { url: 'https://two.example/' } })).status, 200)
    assert.is(await locationOn(blind, link.code), 'https://two.example/')
  })

  // Last: it leaves the standby as the primary.
  test('the synchronous standby away: writes wait, but cached redirects and the change feed keep going, and the pool is not replaced over and over', async (ctx) => {
    const { state, cluster } = ctx
    const srv = await node(ctx, { DATABASE_URL: state.urls.primary, DB_TIMEOUT_MS: '2000' })
    const user = await newUser(srv.url)
    const link = await newLink(srv.url, user.token, 'https://kept.example/')
    await feedSettled(srv)
    assert.is(await locationOn(srv, link.code), 'https://kept.example/')
    const replacedBefore = await metricValue(srv, 'link_service_db_pool_replacements_total')
    cluster.script.stopStandby(state, true)
    try {
      // Creates whose commits wait for the standby: each answers 503 at its time limit, and its
      // backend keeps waiting, holding a connection of the pool.
      const creates = await Promise.all(Array.from({ length: 12 }, (_, i) => call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: `https://waiting.example/${i}` } })))
      assert.ok(creates.every((r) => r.status === 503 || r.status === 201), JSON.stringify(creates.map((r) => r.status)))
      const until10s = Date.now() + 10_000
      let redirects = 0
      while (Date.now() < until10s) {
        assert.is(await locationOn(srv, link.code), 'https://kept.example/', 'a cached redirect')
        redirects++
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      // (Its reads may still fail: the pool's connections are all waiting on commits.)
      const health = await call(srv.url, 'GET', '/healthz')
      assert.is(health.body.change_feed, 'up', `${JSON.stringify(health.body)}\n${srv.logs.filter((l) => l.includes('feed')).join('\n')}`)
      assert.ok(srv.service.feed!.listening, 'the feed stayed up')
      assert.ok(redirects > 20)
      assert.is(await metricValue(srv, 'link_service_db_pool_replacements_total'), replacedBefore, 'the pool was not replaced')
    } finally {
      cluster.script.stopStandby(state, false)
    }
    // The standby back: the waiting commits complete, and writes answer again.
    await until(30_000, async () => (await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://after.example/' } })).status === 201, { every: 500 })
    const sql = postgres(state.urls.primary, { max: 1, onnotice: () => {} })
    try {
      await until(30_000, async () => (await sql`select 1 from pg_stat_replication where application_name = 'standby' and state = 'streaming' and sync_state = 'sync'`).length === 1, {
        every: 200,
        why: () => 'the standby streams again',
      })
    } finally {
      await sql.end({ timeout: 1 })
    }
  })

  test('the primary killed under writes: 503s, never a hang; writes back within 15 s of the promotion; nothing acknowledged lost; cached redirects throughout; feeds re-subscribed', async (ctx) => {
    const { state, cluster } = ctx
    const env = { DATABASE_URL: state.urls.failover, DB_TIMEOUT_MS: '3000' }
    const nodes = [await node(ctx, env), await node(ctx, env)]
    const report = await failoverDrill({
      nodes: nodes.map((n) => n.url),
      kill: () => cluster.script.stopPrimary(state),
      promote: () => cluster.script.promoteStandby(state),
      newPrimaryUrl: state.urls.standby,
      clients: 4,
      promoteAfterMs: 2_000,
      afterMs: 2_000,
    })
    const during = [...report.stats.entries()].find(([phase]) => phase.startsWith('primary killed'))![1]
    assert.ok((during.creates['503'] ?? 0) > 0, `creates while the primary was down: ${JSON.stringify(during.creates)}`)
    assert.ok(report.slowestMs < 3_000 + 2_000, `slowest answer ${report.slowestMs} ms, past DB_TIMEOUT_MS`)
    assert.ok(report.writesBackMs !== undefined && report.writesBackMs <= 15_000, `writes back after ${report.writesBackMs} ms`)
    assert.ok(report.acknowledged > 0)
    assert.is(report.lost, 0)
    assert.is(report.redirectFailures, 0)
    assert.equal(report.feeds, ['up', 'up'])
    assert.ok(report.changeCarried, 'a PATCH on one node reached the other after the failover')
  })

  test.run()
}
