// link-service block ...: a blocked host, and its subdomains, cannot be a link target;
// links already made to it answer 410 until it is removed from the list.
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, uniqueName } from '../helpers/api.js'
import { admin, adminLog, assertFields, cliDataDir, withServer } from '../helpers/cli.js'
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js'
import { openDatabase } from '../../src/db/open.js'
import { freshDatabase } from '../helpers/pg.js'
import { startFeedServer } from '../helpers/feed-server.js'

const test = suite<{ dir: string | undefined }>('link-service block')
test.before(async (ctx) => {
  ctx.dir = await cliDataDir()
})

test('a blocked host: its links and its subdomains\' answer 410, create and PATCH to it answer 422 URL_BLOCKED; removing it restores them', async ({ dir }) => {
  const host = `${uniqueName('bad')}.example`
  const { user, direct, sub, elsewhere } = await withServer(dir, async (srv) => {
    const user = await newUser(srv.url)
    return {
      user,
      direct: (await newLink(srv.url, user.token, `https://${host}/a`)).code as string,
      sub: (await newLink(srv.url, user.token, `http://www.${host}:8080/b`)).code as string,
      elsewhere: (await newLink(srv.url, user.token, `https://not-${host}/c`)).code as string,
    }
  })
  // Any letter case and a trailing dot name the same host.
  const r = await admin(dir, ['block', 'add', `${host.toUpperCase()}.`])
  assert.is(r.status, 0, r.stderr)
  assert.is(r.stdout, `blocked ${host}\n`)
  assertFields(adminLog(r)[0], { action: 'block.add', host, changed: true })
  await withServer(dir, async (srv) => {
    const token = user.token
    for (const code of [direct, sub]) {
      const gone = await call(srv.url, 'GET', `/r/${code}`)
      assert.equal([gone.status, gone.body.code], [410, 'LINK_DISABLED'], code)
      assert.is((await call(srv.url, 'GET', `/api/v1/links/${code}`, { token })).body.disabled, true)
    }
    assert.is((await call(srv.url, 'GET', `/r/${elsewhere}`)).status, 302, 'a host that merely ends alike is not blocked')
    for (const url of [`https://${host}/new`, `https://deep.www.${host.toUpperCase()}./x`]) {
      const created = await call(srv.url, 'POST', '/api/v1/links', { token, body: { url } })
      assert.equal([created.status, created.body.code], [422, 'URL_BLOCKED'], url)
      assert.equal(created.body.errors, [{ field: 'url', code: 'INVALID', message: 'its host is blocked' }])
      const patched = await call(srv.url, 'PATCH', `/api/v1/links/${elsewhere}`, { token, body: { url } })
      assert.equal([patched.status, patched.body.code], [422, 'URL_BLOCKED'], url)
    }
    // The owner may point a link of a blocked host elsewhere: it then redirects again.
    const moved = await call(srv.url, 'PATCH', `/api/v1/links/${direct}`, { token, body: { url: 'https://example.com/' } })
    assert.equal([moved.status, moved.body.disabled], [200, false])
    assert.is((await call(srv.url, 'GET', `/r/${direct}`)).status, 302)
  })
  const list = await admin(dir, ['block', 'list', '--json'])
  assertFields((JSON.parse(list.stdout) as Array<Record<string, unknown>>).find((b) => b.host === host), { host, source: 'manual', links: 1 })
  const removed = await admin(dir, ['block', 'remove', host])
  assert.is(removed.status, 0, removed.stderr)
  assertFields(adminLog(removed)[0], { action: 'block.remove', host })
  await withServer(dir, async (srv) => {
    assert.is((await call(srv.url, 'GET', `/r/${sub}`)).status, 302)
    assert.is((await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: `https://${host}/again` } })).status, 201)
  })
})

test('block list as text; a second add says so; an invalid host, or removing one not blocked, is refused in one line', async ({ dir }) => {
  const host = `${uniqueName('list')}.example`
  assert.is((await admin(dir, ['block', 'add', host])).status, 0)
  assert.equal(JSON.parse((await admin(dir, ['block', 'add', host, '--json'])).stdout), { action: 'block.add', host, changed: false })
  const text = await admin(dir, ['block', 'list'])
  assert.match(text.stdout, /^HOST +SOURCE +LINKS +BLOCKED AT/)
  assert.match(text.stdout, new RegExp(`\\n${host.replace(/\./g, '\\.')} +manual +0 `))
  for (const bad of ['https://evil.example/', 'evil.example:8080', '*.evil.example', 'user@evil.example', '']) {
    const r = await admin(dir, ['block', 'add', bad])
    assert.is(r.status, 1, bad)
    assert.match(r.stderr, /^link-service: not a host name: /)
  }
  const r = await admin(dir, ['block', 'remove', `never-${host}`])
  assert.equal([r.status, r.stderr], [1, `link-service: not blocked: never-${host}\n`])
  assert.is((await admin(dir, ['block', 'remove', host])).status, 0)
})

// The forms a campaign used to get past the block list: [link url, block list entry, blocked host].
const EVASIONS: Array<[string, string, string]> = [
  ['https://HOST../x', 'HOST', 'HOST'],
  ['https://HOST./x', 'HOST...', 'HOST'],
  ['http://[::ffff:127.0.0.1]/x', '127.0.0.1', '127.0.0.1'],
  ['http://[::ffff:7f00:1]:8080/x', '127.0.0.1', '127.0.0.1'],
  ['http://10.0.0.1/x', '[::ffff:10.0.0.1]', '10.0.0.1'],
  ['http://[::10.0.0.2]/x', '10.0.0.2', '10.0.0.2'],
  ['http://[64:ff9b::10.0.0.3]/x', '[::a00:3]', '10.0.0.3'],
  ['http://10.0.0.4/x', '[64:ff9b::a00:4]', '10.0.0.4'],
]

test('trailing dots and IPv4 written as IPv6, in a link or in block add, name one host: made links answer 410, new ones 422', async ({ dir }) => {
  const name = `${uniqueName('dots')}.example`
  const cases = EVASIONS.map(([url, entry, host]) => [url.replace('HOST', name), entry.replace('HOST', name), host.replace('HOST', name)] as const)
  const { token, codes } = await withServer(dir, async (srv) => {
    const user = await newUser(srv.url)
    const codes: string[] = []
    for (const [url] of cases) codes.push((await newLink(srv.url, user.token, url)).code as string)
    return { token: user.token, codes }
  })
  try {
    for (const [, entry, host] of cases) {
      const r = await admin(dir, ['block', 'add', entry, '--json'])
      assert.is(r.status, 0, r.stderr)
      assert.is(JSON.parse(r.stdout).host, host, entry)
    }
    await withServer(dir, async (srv) => {
      for (const [i, [url]] of cases.entries()) {
        const gone = await call(srv.url, 'GET', `/r/${codes[i]}`)
        assert.equal([gone.status, gone.body.code], [410, 'LINK_DISABLED'], url)
        const created = await call(srv.url, 'POST', '/api/v1/links', { token, body: { url } })
        assert.equal([created.status, created.body.code], [422, 'URL_BLOCKED'], url)
      }
    })
  } finally {
    for (const host of new Set(cases.map((c) => c[2]))) await admin(dir, ['block', 'remove', host])
  }
})

test('migration 0009 brings links and blocked hosts stored before it to the canonical host', async () => {
  // A database at the schema before 0009, with rows as the earlier code wrote them.
  const before = mkdtempSync(join(tmpdir(), 'link-service-0009-'))
  for (const file of readdirSync(MIGRATIONS_DIR).filter((f) => f < '0009')) copyFileSync(join(MIGRATIONS_DIR, file), join(before, file))
  const fresh = process.env.DATABASE_URL === undefined ? undefined : await freshDatabase()
  const db = await openDatabase(fresh?.url, join(before, 'data'))
  try {
    await migrate(db.sql, before)
    const [user] = await db.sql<{ id: string }[]>`insert into users (username, display_name, password_hash) values ('m9', 'M', 'x') returning id`
    const stored: Array<[string, string]> = [
      ['Aaaaaaa1', 'evil.example.'], // one dot stripped of "evil.example.."
      ['Aaaaaaa2', '[::ffff:a00:1]'],
      ['Aaaaaaa3', '[::ffff:127.0.0.1]'], // a link older than 0007: its url's spelling
      ['Aaaaaaa4', '[64:ff9b::a00:1]'],
      ['Aaaaaaa5', '[::1]'],
      ['Aaaaaaa6', 'www.fine.example'],
    ]
    for (const [code, host] of stored) {
      await db.sql`insert into links (code, user_id, url, location, host_domains) values (${code}, ${user!.id}, 'https://x/', 'https://x/', domains_of(${host}))`
    }
    for (const host of ['[::ffff:a00:1]', '10.0.0.1', 'evil.example.']) await db.sql`insert into blocked_hosts (host) values (${host})`
    await migrate(db.sql, MIGRATIONS_DIR)
    const links = await db.sql<{ code: string; host_domains: string[] }[]>`select code, host_domains from links order by code`
    assert.equal(links.map((l) => l.host_domains[0]), ['evil.example', '10.0.0.1', '127.0.0.1', '10.0.0.1', '[::1]', 'www.fine.example'])
    assert.equal(links[0]!.host_domains, ['evil.example', 'example'])
    const blocked = await db.sql<{ host: string }[]>`select host from blocked_hosts order by host`
    assert.equal(blocked.map((b) => b.host), ['10.0.0.1', 'evil.example'])
  } finally {
    await db.close()
    await fresh?.drop()
    rmSync(before, { recursive: true, force: true })
  }
})

test('block import: a feed of mixed formats replaces only its own source\'s entries; invalid lines are counted and shown; a failed import changes nothing', async ({ dir }) => {
  const tag = uniqueName('feed')
  const [csvHost, adHost, urlHost, plainHost, manualHost] = ['csv', 'ad', 'url', 'plain', 'manual'].map((p) => `${p}.${tag}.example`) as [string, string, string, string, string]
  const file = join(mkdtempSync(join(tmpdir(), 'feed-')), 'mixed.txt')
  writeFileSync(file, [
    '# URLhaus-style export',
    `"1","2026-01-01 00:00:00","http://${csvHost}/bin","online","","malware_download","elf","https://urlhaus.abuse.ch/url/1/","x"`,
    `||${adHost}^`,
    `https://${urlHost}/login.php`,
    plainHost,
    'not a host!',
  ].join('\n'))
  const source = `${tag}-feed`
  assert.is((await admin(dir, ['block', 'add', manualHost])).status, 0)
  const r = await admin(dir, ['block', 'import', file, '--source', source])
  assert.is(r.status, 0, r.stderr)
  assert.is(r.stdout, `source ${source}: 4 entries (4 added, 0 removed), 1 invalid lines\n  line 6: not a host!\n`)
  assertFields(adminLog(r)[0], { action: 'block.import', source, entries: 4, invalid_lines: 1, invalid_samples: [{ line: 6, text: 'not a host!' }] })
  const listed = JSON.parse((await admin(dir, ['block', 'list', '--source', source, '--json'])).stdout) as Array<{ host: string; source: string }>
  assert.equal(listed.map((e) => e.host), [adHost, csvHost, plainHost, urlHost])
  assert.ok(listed.every((e) => e.source === source))

  // The feed shrinks: its own entries follow it, the manual entry stays.
  writeFileSync(file, `${plainHost}\n`)
  const again = await admin(dir, ['block', 'import', file, '--source', source, '--json'])
  assertFields(JSON.parse(again.stdout), { entries: 1, added: 0, removed: 3 })
  const all = JSON.parse((await admin(dir, ['block', 'list', '--json'])).stdout) as Array<{ host: string; source: string }>
  assert.equal(all.filter((e) => e.host.endsWith(`${tag}.example`)).map((e) => [e.host, e.source]), [[manualHost, 'manual'], [plainHost, source]])

  // A feed that cannot be read: exit 1, entries as they were, the failure recorded for `block sources`.
  const feed = await startFeedServer('x')
  feed.fail(503)
  const failed = await admin(dir, ['block', 'import', feed.url, '--source', source])
  await feed.close()
  assert.equal([failed.status, failed.stderr], [1, `link-service: import failed, the source's entries are unchanged: ${feed.url} answered 503\n`])
  const sources = JSON.parse((await admin(dir, ['block', 'sources', '--json'])).stdout) as Array<Record<string, unknown>>
  assertFields(sources.find((s) => s.name === source), { entries: 1, failures: 1, last_error: `${feed.url} answered 503` })
  assert.is((await admin(dir, ['block', 'remove', plainHost])).stderr, `link-service: ${plainHost} has no manual entry; it is listed by ${source}\n`)

  // Removing the source takes its entries with it.
  const removed = await admin(dir, ['block', 'remove', '--source', source])
  assert.is(removed.stdout, `removed source ${source} and its 1 entries\n`)
  assert.is((await admin(dir, ['block', 'list', '--source', source, '--json'])).stdout, '[]\n')
  assert.is((await admin(dir, ['block', 'remove', manualHost])).status, 0)
})

test('block import shows a hostile feed\'s lines escaped, refuses public suffixes, and refuses a feed that would empty or halve the list unless --force', async ({ dir }) => {
  const tag = uniqueName('guard')
  const source = `${tag}-feed`
  const folder = mkdtempSync(join(tmpdir(), 'feed-'))
  const file = join(folder, 'feed.txt')
  const hosts = Array.from({ length: 300 }, (_, i) => `h${i}.${tag}.example`)
  writeFileSync(file, [...hosts, '\x1b]0;owned\x07bad\x1b[2J line', 'com', '0.0.0.0 co.uk'].join('\n'))
  const r = await admin(dir, ['block', 'import', file, '--source', source])
  assert.is(r.status, 0, r.stderr)
  assert.not.match(r.stdout + r.stderr, /\x1b|\x07/, 'a control character was printed raw')
  assert.is(r.stdout, `source ${source}: 300 entries (300 added, 0 removed), 3 invalid lines (2 of them public suffixes, refused)\n  line 301: \\x1b]0;owned\\x07bad\\x1b[2J line\n  line 302: com\n  line 303: 0.0.0.0 co.uk\n`)
  assertFields(adminLog(r)[0], { action: 'block.import', entries: 300, public_suffixes: 2, forced: false })

  // Garbage served in place of the feed: the list stays, exit 1, and the operator is told of --force.
  const cases: Array<[string, RegExp]> = [
    ['', /no entry at all, where the list has 300/],
    ['Forbidden\n', /no valid entry in 1 lines/],
    [`${hosts.slice(0, 140).join('\n')}\n`, /it would shrink the list from 300 to 140 entries/],
  ]
  for (const [text, why] of cases) {
    writeFileSync(file, text)
    const refused = await admin(dir, ['block', 'import', file, '--source', source])
    assert.is(refused.status, 1, why.source)
    assert.match(refused.stderr, /^link-service: import failed, the source's entries are unchanged: refused: /)
    assert.match(refused.stderr, why)
    assert.match(refused.stderr, /\(--force loads it all the same\)\n$/)
    const [row] = (JSON.parse((await admin(dir, ['block', 'sources', '--json'])).stdout) as Array<Record<string, unknown>>).filter((s) => s.name === source)
    assert.is(row!.entries, 300, why.source)
  }
  // The operator means it: --force loads the shorter list.
  const forced = await admin(dir, ['block', 'import', file, '--source', source, '--force', '--json'])
  assert.is(forced.status, 0, forced.stderr)
  assertFields(JSON.parse(forced.stdout), { entries: 140, removed: 160, forced: true })
  assert.is((await admin(dir, ['block', 'import', file, '--source', source, '--forced'])).status, 1, 'an unknown flag')
  assert.is((await admin(dir, ['block', 'remove', '--source', source])).status, 0)
  rmSync(folder, { recursive: true, force: true })
})

test.run()
