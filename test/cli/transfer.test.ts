// export and import: one JSON Lines stream of the whole state; an import into
// an empty database followed by an export gives the same stream; bad input changes nothing. On the
// engine of this pass (embedded, or PostgreSQL with DATABASE_URL).
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { call, login } from '../helpers/api.js'
import { runCli } from '../helpers/cli.js'
import { exported, exportRows, freshStore, seededExport, type Seeded, type Store } from '../helpers/install.js'
import { freshDatabase, pgUnavailable } from '../helpers/pg.js'
import { startServer } from '../helpers/server.js'
import { exportDatabase, exportSession, tableRows } from '../../src/admin/export.js'
import { importDatabase } from '../../src/admin/import.js'
import { presentTables, TransferError } from '../../src/admin/transfer-format.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/open.js'
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js'

const TMP = mkdtempSync(join(tmpdir(), 'link-service-transfer-'))

let source: Store
let seeded: Seeded
let stream: string

test.before(async () => {
  ;({ source, seeded, stream } = await seededExport('--sessions'))
})
test.after(async () => {
  await source?.drop()
})

test('the stream: a header, users with password hashes, sessions, links with tombstones, statistics, then the row counts', () => {
  const lines = stream.trimEnd().split('\n').map((l) => JSON.parse(l))
  const header = lines[0]
  assert.is(header.format, 'link-service-export')
  assert.is(header.version, 1)
  assert.ok(Number.isInteger(header.schema) && header.schema >= 6)
  const of = (table: string) => lines.filter((l) => l.table === table).map((l) => l.row)
  const users = of('users')
  assert.equal(users.map((u) => u.username).sort(), seeded.users.map((u) => u.username).sort())
  assert.ok(users.every((u) => u.password_hash.startsWith('$argon2id$')))
  assert.is(of('sessions').length, 2)
  const links = new Map(of('links').map((l) => [l.code, l]))
  assert.ok(links.get(seeded.deleted).deleted_at !== null && links.get(seeded.deleted).url === null)
  assert.is(links.get(seeded.visited).visits, 3)
  // timestamps as PostgreSQL renders them, in UTC
  assert.match(links.get(seeded.visited).created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$/)
  assert.is(of('visit_days')[0].humans, 3)
  assert.equal(of('visit_referrers').map((r) => r.host).sort(), ['direct', 'news.example'])
  const trailer = lines.at(-1)
  assert.equal(trailer.counts, { users: 2, sessions: 2, links: 3, link_caps: 0, experiment_secret: 1, link_experiments: 0, experiment_days: 0, conversions_seen: 0, visit_days: 1, visit_referrers: 2, visit_dims: 4, blocked_hosts: 1, blocklist_sources: 0, reports: 0, webhooks: 1 })
  // Webhooks move with their secrets, so that receivers keep verifying after a migration.
  assert.equal(of('webhooks').map((w) => [w.url, w.events, /^whsec_/.test(w.secret)]), [['https://hooks.example/link-service', ['link.expired'], true]])
  assert.equal(of('visit_dims').map((r) => r.dim).sort(), ['browser', 'country', 'device', 'os'])
  assert.equal(of('blocked_hosts').map((b) => b.host), ['blocked.example'])
})

test('without --sessions the stream has no sessions', async () => {
  const plain = await exported(source)
  assert.not.ok(plain.includes('"table":"sessions"'))
  assert.is(JSON.parse(plain.trimEnd().split('\n').at(-1)!).counts.sessions, undefined)
})

test('import into an empty database, then export: the same stream; logins, redirects, counts and tombstones hold', async () => {
  const target = await freshStore()
  try {
    const r = await runCli(['import', '--json'], target.env, stream)
    assert.is(r.status, 0, r.stderr)
    assert.equal(JSON.parse(r.stdout).counts.links, 3)
    const log = JSON.parse(r.stderr.trim().split('\n').at(-1)!)
    assert.is(log.msg, 'admin')
    assert.is(log.action, 'import')
    assert.is(log.counts.users, 2)
    assert.not.ok(r.stderr.includes('$argon2id$'))
    assert.equal(exportRows(await exported(target, '--sessions')), exportRows(stream))

    const srv = await startServer(target.env)
    try {
      const [alice, bob] = seeded.users as [typeof seeded.users[0], typeof seeded.users[0]]
      // the old session token works, and the old password logs in
      assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token: alice.token })).status, 200)
      await login(srv.url, bob.username, bob.password)
      const visited = await call(srv.url, 'GET', `/r/${seeded.visited}`)
      assert.is(visited.status, 302)
      assert.is(visited.headers.get('location'), 'https://example.com/visited?q=1')
      assert.is((await call(srv.url, 'GET', `/r/${seeded.quiet}`)).headers.get('location'), 'https://example.org/%C3%BCn%C3%AFcode')
      assert.is((await call(srv.url, 'GET', `/api/v1/links/${seeded.visited}`, { token: alice.token })).body.visits, 3)
      // its redirect rules came along
      const iphone = { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1' }
      assert.is((await call(srv.url, 'GET', `/r/${seeded.visited}`, { headers: iphone })).headers.get('location'), 'https://apps.example/ios')
      assert.is((await call(srv.url, 'GET', `/r/${seeded.deleted}`)).status, 404)
      const reuse = await call(srv.url, 'POST', '/api/v1/links', { token: bob.token, body: { url: 'https://example.com/', code: seeded.deleted } })
      assert.is(reuse.status, 409)
      assert.is(reuse.body.code, 'CODE_TAKEN')
      // new links are numbered after the imported ones
      assert.is((await call(srv.url, 'POST', '/api/v1/links', { token: bob.token, body: { url: 'https://example.com/new' } })).status, 201)
    } finally {
      await srv.close()
    }
  } finally {
    await target.drop()
  }
})

test('export --file writes a file for its owner alone (0600) and says what it wrote', async () => {
  const file = join(TMP, 'export.jsonl')
  const r = await runCli(['export', `--file=${file}`], source.env)
  assert.is(r.status, 0, r.stderr)
  assert.is(statSync(file).mode & 0o777, 0o600)
  assert.match(r.stdout, /^exported to .*export\.jsonl: users 2, links 3, /)
  assert.equal(exportRows(readFileSync(file, 'utf8')), exportRows(stream).filter((l) => !l.startsWith('{"table":"sessions"')).map((l) => l.replace(/"sessions":2,/, '')))

  const target = await freshStore()
  try {
    const imported = await runCli(['import', '--file', file], target.env)
    assert.is(imported.status, 0, imported.stderr)
    assert.match(imported.stdout, /^imported: users 2, links 3, /)
  } finally {
    await target.drop()
  }
})

test('bad input is refused in one line, exit 1, and the database stays empty', async () => {
  const target = await freshStore()
  try {
    const r = await runCli(['import'], target.env, '\x00\x01binary\n')
    assert.is(r.status, 1)
    assert.is(r.stderr, 'link-service: line 1: not JSON: not a link-service export\n')
    assert.is((await runCli(['import'], target.env, stream)).status, 0)
  } finally {
    await target.drop()
  }
})

/** Each is refused and rolled back: the good stream then imports into the same database. */
test('import refuses a truncated or damaged stream, another version or schema, rows out of order', async () => {
  const lines = stream.trimEnd().split('\n')
  const header = JSON.parse(lines[0]!)
  const bad: Array<[string, string[], RegExp]> = [
    ['empty', [], /^the input is empty/],
    ['no header', lines.slice(1), /^line 1: not a link-service export/],
    ['another version', [JSON.stringify({ ...header, version: 2 }), ...lines.slice(1)], /^line 1: export format version 2/],
    ['another schema', [JSON.stringify({ ...header, schema: 5 }), ...lines.slice(1)], /^line 1: the export is of schema 5/],
    ['truncated', lines.slice(0, -2), /without its last line .*truncated/],
    ['a row lost', [...lines.slice(0, -2), lines.at(-1)!], /^the export says 1 rows of webhooks, the input has 0/],
    ['out of order', [lines[0]!, ...lines.slice(1, -1).reverse(), lines.at(-1)!], /not the export's order/],
    ['after the end', [...lines, lines[1]!], /a line after the last one/],
    ['an unknown table', [lines[0]!, '{"table":"schema_migrations","row":{}}'], /^line 2: no table "schema_migrations"/],
    ['not a row', [lines[0]!, '{"table":"users","row":[1]}'], /^line 2: "row" is not a JSON object/],
    ['an array', ['[1]'], /^line 1: not a JSON object/],
    ['no table', [lines[0]!, '{"row":{}}'], /^line 2: not a row: "table" is not a string/],
    ['not JSON inside', [lines[0]!, '{"table":'], /^line 2: not JSON$/],
  ]
  const target = await freshStore()
  // read as the service reads it: an empty DATABASE_URL is unset
  const config = loadConfig(target.env)
  const db = await openDatabase(config.databaseUrl, config.dataDir)
  try {
    await migrate(db.sql, MIGRATIONS_DIR)
    for (const [what, input, reason] of bad) {
      const err = await importDatabase(db.sql, { argon2: config.argon2, verify: false }, async (line) => {
        for (const text of input) await line(text)
      }).then(() => undefined, (e: Error) => e)
      assert.instance(err, TransferError, what)
      assert.match(err!.message, reason, `${what}: ${err!.message}`)
    }
    const counts = await importDatabase(db.sql, { argon2: config.argon2, verify: true }, async (line) => {
      for (const text of lines) await line(text)
    })
    assert.is(counts.users, 2)
  } finally {
    await db.close()
    await target.drop()
  }
})

test('import refuses a database that is not empty, and leaves it as it was', async () => {
  const r = await runCli(['import'], source.env, stream)
  assert.is(r.status, 1)
  assert.match(r.stderr, /the database is not empty \(table users has rows\): import only into an empty database/)
  assert.equal(exportRows(await exported(source, '--sessions')), exportRows(stream))
})

test('import of a file that does not exist is refused before the database is opened', async () => {
  const r = await runCli(['import', '--file', join(TMP, 'missing.jsonl')], { DATA_DIR: '/nonexistent/x' })
  assert.is(r.status, 1)
  assert.match(r.stderr, /cannot read .*missing\.jsonl: ENOENT/)
})

test('unknown arguments are refused', async () => {
  for (const args of [['export', '--all'], ['import', 'x'], ['migrate', '--from-data-dir', 'x', '--force']]) {
    const r = await runCli(args, { DATA_DIR: '/nonexistent/x' })
    assert.is(r.status, 1)
    assert.match(r.stderr, new RegExp(`^link-service: ${args[0]}: unexpected argument ${args.at(-1)}\n$`))
  }
})

test('an export whose database cannot be opened fails in one line and leaves no file', async () => {
  const plain = join(TMP, 'plain')
  writeFileSync(plain, '')
  const file = join(TMP, 'never.jsonl')
  const r = await runCli(['export', '--file', file], { DATA_DIR: join(plain, 'db') })
  assert.is(r.status, 1)
  assert.match(r.stderr, /^link-service: cannot open the database: ENOTDIR/)
  assert.not.ok(existsSync(file))
})

test('an export is one snapshot: a row committed while it is written is not in it (PostgreSQL)', async () => {
  const reason = await pgUnavailable()
  if (reason !== undefined) {
    process.stdout.write(`transfer.test: snapshot test not run: ${reason}\n`)
    return
  }
  const fresh = await freshDatabase()
  const db = await openDatabase(fresh.url, TMP)
  try {
    await migrate(db.sql, MIGRATIONS_DIR)
    const add = (name: string) => db.sql`insert into users (username, display_name, password_hash) values (${name}, 'Name', 'x')`
    await add('before')
    const lines: string[] = []
    await exportDatabase(db.sql, { sessions: false }, async (line) => {
      // another connection, committed after the export began
      if (lines.length === 0) await add('during')
      lines.push(line)
    })
    assert.equal(lines.filter((l) => l.startsWith('{"table":"users"')).map((l) => JSON.parse(l).row.username), ['before'])
    assert.is(JSON.parse(lines.at(-1)!).counts.users, 1)
  } finally {
    await db.close()
    await fresh.drop()
  }
})

test('the export reads each table from its primary key in key order, never by sorting it (a sort of a big table spills it whole to temp files first)', async () => {
  const store = await freshStore()
  const db = await openDatabase(store.env.DATABASE_URL || undefined, store.env.DATA_DIR ?? TMP)
  try {
    await migrate(db.sql, MIGRATIONS_DIR)
    const [user] = await db.sql`insert into users (username, display_name, password_hash) values ('sorter', 'Name', 'x') returning id`
    await db.sql`insert into links (code, user_id, url, location) values ('SortMe01', ${user!.id}, 'https://example.com/', 'https://example.com/')`
    // Rows in no order; below, the planner is told the cache is tiny, as it is for a table many
    // times the memory (10M links), where reading the whole table sorted is its own choice.
    await db.sql`insert into visit_dims (code, day, dim, value, visits)
      select 'SortMe01', current_date - (i % 30), (array['device', 'browser', 'os', 'country'])[1 + i % 4], 'v' || i, 1
      from generate_series(1, 20000) i order by random()`
    await db.sql`analyze`
    const plans = await db.sql.begin(async (tx) => {
      await tx`set local effective_cache_size = '8kB'`
      const tables = await presentTables(tx)
      const plan = async (t: (typeof tables)[number]) => (await tx`explain ${tableRows(tx, t)}`).map((r) => r['QUERY PLAN']).join('\n')
      const dims = tables.find((t) => t.name === 'visit_dims')!
      const unset = await plan(dims)
      await exportSession(tx)
      return { unset, set: await Promise.all(tables.map(async (t) => [t.name, await plan(t)] as const)) }
    })
    assert.match(plans.unset, /Sort/, `without the export's settings the planner sorts this table (else the test shows nothing):\n${plans.unset}`)
    for (const [name, plan] of plans.set) assert.not.match(plan, /Sort\b(?! Key)/, `${name} is sorted:\n${plan}`)
  } finally {
    await db.close()
    await store.drop()
  }
})

test.run()
