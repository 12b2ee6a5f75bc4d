// An import trusts nothing (issue 18): an export edited since it was written is refused by its
// digest; every row passes the API's rules whatever the digest says; a line longer than any row
// is refused before it is held whole. And the files around it: migrate refuses a DATA_DIR others
// can write, export --file follows no symlink, an engine's file error is named.
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runCli } from '../helpers/cli.js'
import { freshStore, seededExport, type Seeded, type Store } from '../helpers/install.js'
import { freshDataDir } from '../helpers/server.js'
import { importDatabase, readExportLines } from '../../src/admin/import.js'
import { MAX_LINE_BYTES, TransferError } from '../../src/admin/transfer-format.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/open.js'
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js'

const TMP = mkdtempSync(join(tmpdir(), 'link-service-trust-'))

let source: Store
let seeded: Seeded
let stream: string

test.before(async () => {
  ;({ source, seeded, stream } = await seededExport())
})
test.after(async () => {
  await source?.drop()
})

/** The stream with one row of `table` (the first `which` accepts) changed by `edit`. */
function edited(table: string, edit: (row: Record<string, unknown>) => void, which: (row: Record<string, unknown>) => boolean = () => true): string[] {
  let done = false
  const lines = stream.trimEnd().split('\n').map((line) => {
    const value = JSON.parse(line) as { table?: string; row?: Record<string, unknown> }
    if (done || value.table !== table || !which(value.row!)) return line
    done = true
    edit(value.row!)
    return JSON.stringify(value)
  })
  assert.ok(done, `a row of ${table} to edit`)
  return lines
}

/** Into a fresh database of this pass, opened here: `check` sees it before it is dropped. */
async function importInto(lines: string[], verify: boolean, check?: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<void>): Promise<Error | undefined> {
  const target = await freshStore()
  const config = loadConfig(target.env)
  const db = await openDatabase(config.databaseUrl, config.dataDir)
  try {
    await migrate(db.sql, MIGRATIONS_DIR)
    const err = await importDatabase(db.sql, { argon2: config.argon2, verify }, async (line) => {
      for (const text of lines) await line(text)
    }).then(() => undefined, (e: Error) => e)
    const [{ n }] = (await db.sql`select count(*)::int as n from users`) as unknown as [{ n: number }]
    if (err !== undefined) assert.is(n, 0, 'a refused import writes nothing')
    await check?.(db)
    return err
  } finally {
    await db.close()
    await target.drop()
  }
}

test('an export edited after it was written is refused by its digest, naming --no-verify; with it, the edit imports', async () => {
  const changed = stream.replace('https://example.com/visited?q=1', 'https://example.com/changed')
  assert.is.not(changed, stream)
  const target = await freshStore()
  try {
    const refused = await runCli(['import'], target.env, changed)
    assert.is(refused.status, 1)
    assert.match(refused.stderr, /^link-service: line \d+: the lines differ from the digest in the last line: the export was changed or damaged since it was written \(import --no-verify takes it as it is; every row is still checked\)\n$/)
    const taken = await runCli(['import', '--no-verify'], target.env, changed)
    assert.is(taken.status, 0, taken.stderr)
    assert.ok((await runCli(['export'], target.env)).stdout.includes('https://example.com/changed'))
  } finally {
    await target.drop()
  }
  const lines = stream.trimEnd().split('\n')
  const bare = JSON.parse(lines.at(-1)!) as Record<string, unknown>
  delete bare.sha256
  const err = await importInto([...lines.slice(0, -1), JSON.stringify(bare)], true)
  assert.match(err?.message ?? '', /the last line has no digest \("sha256"\).*--no-verify/)
})

test('every imported row passes the API\'s rules, digest or not: urls, usernames, display names, codes, counts, block list, password hashes', async () => {
  const argon2 = (m: number, t: number) => `$argon2id$v=19$m=${m},t=${t},p=1$${Buffer.alloc(16, 1).toString('base64').replace(/=+$/, '')}$${Buffer.alloc(32, 2).toString('base64').replace(/=+$/, '')}`
  const live = (row: Record<string, unknown>) => row.deleted_at === null
  const cases: Array<[string, string[], RegExp]> = [
    ['a javascript: url', edited('links', (r) => (r.url = 'javascript:alert(1)'), live), /links row: url: must be an absolute http or https URL/],
    ['a url of a host of dots', edited('links', (r) => (r.url = 'https://../'), live), /links row: url: must have a host/],
    ['a redirect rule to a javascript: url', edited('links', (r) => (r.rules = [{ if: { device: 'ios' }, url: 'javascript:alert(1)' }]), live), /links row: rules\[0\]\.url: must be an absolute http or https URL/],
    ['redirect rules that are no array', edited('links', (r) => (r.rules = { device: 'ios' }), live), /links row: rules: must be an array of rules or null/],
    ['an uppercase username with a space', edited('users', (r) => (r.username = 'Bad Name')), /users row: username: must contain only visible ASCII characters/],
    ['an uppercase username', edited('users', (r) => (r.username = 'Alice')), /users row: username: must be lowercase/],
    ['a 5,000-character display name', edited('users', (r) => (r.display_name = 'x'.repeat(5000))), /users row: display_name: must be at most 32 characters/],
    ['a code that is no short code', edited('links', (r) => (r.code = 'short')), /links row: code: must be at least 8 characters/],
    ['a code with a slash', edited('links', (r) => (r.code = 'abcd/efg')), /links row: code: must be 8 Base62 characters/],
    ['negative visits', edited('links', (r) => (r.visits = -5)), /links row: visits: must be a whole number from 0, not -5/],
    ['negative humans', edited('visit_days', (r) => (r.humans = -1)), /visit_days row: humans: must be a whole number from 0/],
    ['a fraction of a visit', edited('visit_referrers', (r) => (r.visits = 1.5)), /visit_referrers row: visits: must be a whole number from 0, not 1.5/],
    ['a hash at m=1048576,t=64', edited('users', (r) => (r.password_hash = argon2(1_048_576, 64))), /users row: password_hash: costs more \(m=1048576,t=64\) than ARGON2_MEMORY_KIB=19456 and ARGON2_ITERATIONS=2 allow/],
    ['a hash dearer in passes only', edited('users', (r) => (r.password_hash = argon2(19_456, 3))), /password_hash: costs more \(m=19456,t=3\)/],
    ['a scrypt hash above the earlier default', edited('users', (r) => (r.password_hash = `scrypt$20$8$1$${'A'.repeat(22)}$${'B'.repeat(43)}`)), /password_hash: costs more \(scrypt N=2\^20\)/],
    ['a password in clear', edited('users', (r) => (r.password_hash = 'hunter2')), /users row: password_hash: not a password hash this release can check/],
    ['a link\'s password hash at m=1048576,t=8', edited('links', (r) => (r.password_hash = argon2(1_048_576, 8)), live), /links row: password_hash: costs more \(m=1048576,t=8\)/],
    ['a link\'s password in clear', edited('links', (r) => (r.password_hash = 'hunter2'), live), /links row: password_hash: not a password hash this release can check/],
    ['a unique-visitor sketch of the wrong size', edited('visit_days', (r) => (r.sketch = '\\x0102')), /visit_days row: sketch: must be null or 1024 bytes/],
    ['a sketch register past the largest rank', edited('visit_days', (r) => (r.sketch = `\\x${'ff'.repeat(1024)}`)), /visit_days row: sketch: must be null or 1024 bytes \(hex, as exported\) of registers from 0 to 55/],
    ['a webhook to a javascript: url', edited('webhooks', (r) => (r.url = 'javascript:alert(1)')), /webhooks row: url: must be an absolute http or https URL/],
    ['a webhook with an unknown event', edited('webhooks', (r) => (r.events = ['link.everything'])), /webhooks row: events: must be a non-empty list/],
    ['a webhook secret not in its form', edited('webhooks', (r) => (r.secret = 'hunter2')), /webhooks row: secret: must be "whsec_"/],
    ['a block list entry not in its form', edited('blocked_hosts', (r) => (r.host = 'Blocked.Example.')), /blocked_hosts row: host: "Blocked.Example." is not a host in the block list's form/],
  ]
  for (const [what, lines, reason] of cases) {
    const err = await importInto(lines, false)
    assert.instance(err, TransferError, what)
    assert.match(err!.message, /^line \d+: /, what)
    assert.match(err!.message, reason, `${what}: ${err!.message}`)
  }
  // The CLI says it in one line.
  const target = await freshStore()
  try {
    const r = await runCli(['import', '--no-verify'], target.env, cases[0]![1].join('\n') + '\n')
    assert.is(r.status, 1)
    assert.match(r.stderr, /^link-service: line \d+: links row: url: must be an absolute http or https URL\n$/)
  } finally {
    await target.drop()
  }
})

test('what a link\'s url and rules determine (its Location and hosts) is computed on import, never taken from the row', async () => {
  const lines = edited('links', (r) => {
    r.location = 'https://evil.example/'
    r.host_domains = ['elsewhere.example']
    r.rule_domains = r.code === seeded.visited ? null : ['apps.example']
  }, (r) => r.code === seeded.quiet || r.code === seeded.visited)
  await importInto(lines, false, async (db) => {
    const [link] = (await db.sql`select location, host_domains, rule_domains from links where code = ${seeded.quiet}`) as unknown as [{ location: string; host_domains: string[] }]
    assert.equal(link, { location: 'https://example.org/%C3%BCn%C3%AFcode', host_domains: ['example.org', 'org'], rule_domains: null })
    // A rule's host is on the list whatever the row says: a listed apps.example would stop the link.
    const [ruled] = (await db.sql`select rule_domains from links where code = ${seeded.visited}`) as unknown as [{ rule_domains: string[] }]
    assert.equal(ruled.rule_domains, ['apps.example', 'example'])
    const [gone] = (await db.sql`select location, host_domains from links where code = ${seeded.deleted}`) as unknown as [{ location: null; host_domains: null }]
    assert.equal(gone, { location: null, host_domains: null })
  })
})

test('a line longer than any row is refused once its bytes pass the bound, never held whole', async () => {
  const MiB = Buffer.alloc(1024 * 1024, 'a')
  let pulled = 0
  async function* endless() {
    yield Buffer.from('{"format":"link-service-export"}\n')
    for (let i = 0; i < 400; i++) {
      pulled++
      yield MiB
    }
  }
  const seen: string[] = []
  const err = await readExportLines(endless(), async (text) => void seen.push(text)).then(() => undefined, (e: Error) => e)
  assert.instance(err, TransferError)
  assert.is(err!.message, `line 2: longer than ${MAX_LINE_BYTES} bytes, which no row of an export is`)
  assert.is(seen.length, 1)
  assert.ok(pulled <= MAX_LINE_BYTES / MiB.length + 1, `read ${pulled} MiB of a 400 MiB line`)
  // Lines split across chunks, CRLF and a last line without its newline read as they were written.
  const lines: string[] = []
  await readExportLines((async function* () {
    yield 'ab'
    yield Buffer.from('c\r\nd\n\ne')
    yield 'é\n'.slice(0, 1)
  })(), async (text) => void lines.push(text))
  assert.equal(lines, ['abc', 'd', '', 'eé'])
  const target = await freshStore()
  try {
    const r = await runCli(['import'], target.env, stream.split('\n')[0] + '\n' + 'x'.repeat(MAX_LINE_BYTES + 1) + '\n')
    assert.is(r.status, 1)
    assert.is(r.stderr, `link-service: line 2: longer than ${MAX_LINE_BYTES} bytes, which no row of an export is\n`)
  } finally {
    await target.drop()
  }
})

test('migrate refuses a DATA_DIR that others can write, before opening anything', async () => {
  const dir = await freshDataDir()
  for (const mode of [0o777, 0o720, 0o702]) {
    chmodSync(dir, mode)
    const r = await runCli(['migrate', '--from-data-dir', dir], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/never' })
    assert.is(r.status, 1)
    assert.is(r.stderr, `link-service: ${dir} is writable by others (mode ${mode.toString(8).padStart(4, '0')}): its data cannot be trusted; check it, then chmod go-w it\n`)
  }
  chmodSync(dir, 0o700)
})

test('export --file does not follow a symlink planted at its path: it writes a new file and renames it into place', async () => {
  const dir = join(TMP, 'out')
  mkdirSync(dir)
  const victim = join(TMP, 'victim')
  writeFileSync(victim, 'not yours\n', { mode: 0o644 })
  const file = join(dir, 'export.jsonl')
  symlinkSync(victim, file)
  const r = await runCli(['export', '--file', file], source.env)
  assert.is(r.status, 0, r.stderr)
  assert.is(readFileSync(victim, 'utf8'), 'not yours\n')
  const written = lstatSync(file)
  assert.ok(written.isFile() && !written.isSymbolicLink())
  assert.is(written.mode & 0o777, 0o600)
  const body = (text: string) => text.trimEnd().split('\n').slice(1, -1)
  assert.equal(body(readFileSync(file, 'utf8')), body(stream))
  assert.equal(readdirSync(dir), ['export.jsonl'], 'no temporary file left')
  // A directory that cannot be written: one line, nothing left.
  const closed = join(TMP, 'closed')
  mkdirSync(closed, { mode: 0o500 })
  const refused = await runCli(['export', '--file', join(closed, 'x.jsonl')], source.env)
  if (process.getuid?.() !== 0) {
    assert.is(refused.status, 1)
    assert.match(refused.stderr, /^link-service: cannot write beside .*x\.jsonl: EACCES\n$/)
  }
})

test('the embedded engine\'s file errors are named, and a DATA_DIR that is a symlink opens', async () => {
  const broken = join(TMP, 'broken')
  mkdirSync(broken)
  symlinkSync(join(TMP, 'nowhere'), join(broken, 'base'))
  const r = await runCli(['user', 'list'], { DATA_DIR: broken })
  assert.is(r.status, 1)
  assert.match(r.stderr, /^link-service: cannot open the database: the embedded engine failed on a file in .*broken: E[A-Z]+\n$/)
  const real = join(TMP, 'real')
  mkdirSync(real)
  symlinkSync(real, join(TMP, 'linked'))
  const linked = await runCli(['user', 'list'], { DATA_DIR: join(TMP, 'linked') })
  assert.equal([linked.status, linked.stderr], [0, ''])
  assert.ok(existsSync(join(real, 'PG_VERSION')))
})

test.run()
