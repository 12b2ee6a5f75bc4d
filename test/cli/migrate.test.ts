// migrate --from-data-dir: an embedded install moved into PostgreSQL in one step
// serves the same logins and redirects, with their counts. Runs in both passes of `npm test`: the
// source is always embedded, the target a fresh database of the local PostgreSQL (TEST_ADMIN_URL).
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, login } from '../helpers/api.js'
import { runCli } from '../helpers/cli.js'
import { embedded, exportRows, seedInstall, type Seeded } from '../helpers/install.js'
import { freshDatabase, pgUnavailable, type FreshDatabase } from '../helpers/pg.js'
import { freshDataDir, startServer } from '../helpers/server.js'

const unavailable = await pgUnavailable()
if (unavailable !== undefined) {
  process.stdout.write(`migrate.test: not run: ${unavailable}\n`)
} else {
  const test = suite<{ dir: string; seeded: Seeded; target: FreshDatabase }>('migrate')
  test.before(async (ctx) => {
    ctx.dir = await freshDataDir()
    ctx.seeded = await seedInstall(embedded(ctx.dir))
    ctx.target = await freshDatabase()
  })
  test.after(async (ctx) => {
    await ctx.target?.drop()
    if (ctx.dir !== undefined) rmSync(ctx.dir, { recursive: true, force: true })
  })

  test('migrate needs DATABASE_URL and a directory that holds an embedded database', async ({ dir }) => {
    const noTarget = await runCli(['migrate', '--from-data-dir', dir], embedded(dir))
    assert.is(noTarget.status, 1)
    assert.match(noTarget.stderr, /set DATABASE_URL to the \(empty\) target database/)
    const noSource = await runCli(['migrate'], { DATABASE_URL: 'postgres://127.0.0.1:1/x' })
    assert.match(noSource.stderr, /migrate needs --from-data-dir DIR/)
    const empty = await runCli(['migrate', '--from-data-dir', join(dir, 'base')], { DATABASE_URL: 'postgres://127.0.0.1:1/x' })
    assert.is(empty.status, 1)
    assert.match(empty.stderr, /holds no embedded database/)
  })

  test('while a service runs on the directory, migrate refuses in one line and moves nothing', async ({ dir, target }) => {
    const srv = await startServer(embedded(dir))
    try {
      const r = await runCli(['migrate', '--from-data-dir', dir], { DATABASE_URL: target.url })
      assert.is(r.status, 1)
      assert.match(r.stderr, /^link-service: DATA_DIR .* is in use by another running link service .*stop the service first/)
      assert.is(r.stderr.trim().split('\n').length, 1)
    } finally {
      await srv.close()
    }
  })

  test('after migrate, PostgreSQL serves the same logins, sessions, redirects and counts; a deleted code stays taken', async ({ dir, seeded, target }) => {
    const r = await runCli(['migrate', '--from-data-dir', dir, '--json'], { DATABASE_URL: target.url })
    assert.is(r.status, 0, r.stderr)
    const counts = JSON.parse(r.stdout).counts
    for (const [table, n] of Object.entries({ users: 2, sessions: 2, links: 3, visit_days: 1, visit_referrers: 2, blocked_hosts: 1 })) {
      assert.is(counts[table], n, table)
    }
    assert.is(JSON.parse(r.stderr.trim()).action, 'migrate')

    // The same stream from both (header aside): nothing lost or changed on the way.
    const [from, to] = await Promise.all([runCli(['export', '--sessions'], embedded(dir)), runCli(['export', '--sessions'], { DATABASE_URL: target.url })])
    assert.equal(exportRows(to.stdout), exportRows(from.stdout))

    const srv = await startServer({ DATABASE_URL: target.url })
    try {
      const [alice, bob] = seeded.users as [typeof seeded.users[0], typeof seeded.users[0]]
      await login(srv.url, alice.username, alice.password)
      await login(srv.url, bob.username, bob.password)
      assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token: bob.token })).status, 200)
      const visited = await call(srv.url, 'GET', `/r/${seeded.visited}`)
      assert.is(visited.status, 302)
      assert.is(visited.headers.get('location'), 'https://example.com/visited?q=1')
      assert.is((await call(srv.url, 'GET', `/r/${seeded.quiet}`)).status, 302)
      const link = await call(srv.url, 'GET', `/api/v1/links/${seeded.visited}`, { token: alice.token })
      assert.is(link.body.visits, 3)
      const stats = await call(srv.url, 'GET', `/api/v1/links/${seeded.visited}/stats`, { token: alice.token })
      assert.is(stats.status, 200)
      assert.match(JSON.stringify(stats.body), /news\.example/)
      assert.is((await call(srv.url, 'GET', `/r/${seeded.deleted}`)).status, 404)
      const reuse = await call(srv.url, 'POST', '/api/v1/links', { token: bob.token, body: { url: 'https://example.com/', code: seeded.deleted } })
      assert.is(reuse.status, 409)
      assert.is(reuse.body.code, 'CODE_TAKEN')
    } finally {
      await srv.close()
    }
  })

  test('migrate into a database that is not empty is refused, and that database is left as it was', async ({ dir, target }) => {
    const before = await runCli(['export', '--sessions'], { DATABASE_URL: target.url })
    const r = await runCli(['migrate', '--from-data-dir', dir], { DATABASE_URL: target.url })
    assert.is(r.status, 1)
    assert.match(r.stderr, /the database is not empty/)
    const after = await runCli(['export', '--sessions'], { DATABASE_URL: target.url })
    assert.equal(exportRows(after.stdout), exportRows(before.stdout))
  })

  test.run()
}
