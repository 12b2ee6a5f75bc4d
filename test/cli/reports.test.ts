// link-service report ...: a report posted without an account shows in `report list`; resolving
// it acts on the link (disable it, its owner or its host) or dismisses it, closes the link's open
// reports, and lifts a suspension by reports.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, uniqueName } from '../helpers/api.js'
import { admin, adminLog, assertFields, cliDataDir } from '../helpers/cli.js'
import { startServer, type TestServer } from '../helpers/server.js'

const test = suite<{ dir: string | undefined }>('link-service report')
test.before(async (ctx) => {
  ctx.dir = await cliDataDir()
})

/** A service on the CLI's database while `use` runs (the embedded one is a process's own). */
async function serving<T>(dir: string | undefined, use: (srv: TestServer) => Promise<T>): Promise<T> {
  const srv = await startServer({ ...(dir === undefined ? {} : { DATA_DIR: dir }), REPORTS_SUSPEND_AFTER: '2' })
  try {
    return await use(srv)
  } finally {
    await srv.close()
  }
}

interface Listed { id: number; code: string; reason: string; state: string; resolution: string | null; username: string; details: string | null; link_suspended: boolean }
const reportsOf = async (dir: string | undefined, code: string, open = false) =>
  (JSON.parse((await admin(dir, ['report', 'list', ...(open ? ['--open'] : []), '--json'])).stdout) as Listed[]).filter((r) => r.code === code)

test('a report without an account shows in report list; resolve --disable-link stops the link and closes the report', async ({ dir }) => {
  const { user, code } = await serving(dir, async (srv) => {
    const user = await newUser(srv.url)
    const link = await newLink(srv.url, user.token, 'https://login-bank.example/')
    const res = await call(srv.url, 'POST', '/api/v1/reports', { body: { url: link.short_url, reason: 'phishing', details: 'fake bank\nlogin' } })
    assert.is(res.status, 202)
    return { user, code: link.code as string }
  })
  const [open] = await reportsOf(dir, code, true)
  assertFields(open as unknown as Record<string, unknown>, { code, reason: 'phishing', state: 'open', username: user.username, details: 'fake bank\nlogin' })
  const text = await admin(dir, ['report', 'list', '--open'])
  assert.match(text.stdout, /^ID +CODE +REASON +STATE +RECEIVED +USER +URL +DETAILS\n/)
  assert.match(text.stdout, new RegExp(`\\n${open!.id} +${code} +phishing +open .* https://login-bank\\.example/ +fake bank login`))

  const r = await admin(dir, ['report', 'resolve', String(open!.id), '--disable-link', '--note', 'ticket 12'])
  assert.is(r.status, 0, r.stderr)
  assert.is(r.stdout, `disabled link ${code}; 1 open report(s) of ${code} resolved\n`)
  assertFields(adminLog(r)[0], { msg: 'admin', action: 'report.disable-link', id: open!.id, code, note: 'ticket 12', reports_resolved: 1, changed: true })
  assert.equal(await reportsOf(dir, code, true), [])
  assertFields((await reportsOf(dir, code))[0] as unknown as Record<string, unknown>, { state: 'resolved', resolution: 'disable-link' })
  await serving(dir, async (srv) => {
    const gone = await call(srv.url, 'GET', `/r/${code}`)
    assert.equal([gone.status, gone.body.code], [410, 'LINK_DISABLED'])
  })
  const again = await admin(dir, ['report', 'resolve', String(open!.id), '--dismiss'])
  assert.equal([again.status, again.stderr.startsWith(`link-service: report ${open!.id} is already resolved (disable-link, `)], [1, true])
})

test('dismissing lifts a suspension by reports; --block-host and --disable-user act on the host and the owner', async ({ dir }) => {
  const host = `${uniqueName('rep')}.example`
  const { user, suspended, other } = await serving(dir, async (srv) => {
    const user = await newUser(srv.url)
    const suspended = await newLink(srv.url, user.token)
    const other = await newLink(srv.url, user.token, `https://www.${host}/`)
    for (const link of [suspended, suspended, other]) await call(srv.url, 'POST', '/api/v1/reports', { body: { code: link.code, reason: 'spam' } })
    assert.is((await call(srv.url, 'GET', `/r/${suspended.code}`)).status, 410)
    return { user, suspended: suspended.code as string, other: other.code as string }
  })
  const [first] = await reportsOf(dir, suspended, true)
  assert.is(first!.link_suspended, true)
  const dismissed = await admin(dir, ['report', 'resolve', String(first!.id), '--dismiss'])
  assert.is(dismissed.stdout, `dismissed the reports of ${suspended}; 2 open report(s) of ${suspended} resolved\n`)
  const [toBlock] = await reportsOf(dir, other, true)
  const blocked = await admin(dir, ['report', 'resolve', String(toBlock!.id), '--block-host', '--json'])
  assertFields(JSON.parse(blocked.stdout), { action: 'report.block-host', host: `www.${host}`, changed: true })
  await serving(dir, async (srv) => {
    assert.is((await call(srv.url, 'GET', `/r/${suspended}`)).status, 302, 'dismissed: the suspension is lifted')
    assert.is((await call(srv.url, 'GET', `/r/${other}`)).status, 410)
    await call(srv.url, 'POST', '/api/v1/reports', { body: { code: suspended, reason: 'other' } })
  })
  const [last] = await reportsOf(dir, suspended, true)
  const disabled = await admin(dir, ['report', 'resolve', String(last!.id), '--disable-user'])
  assert.is(disabled.stdout, `disabled ${user.username}; 1 open report(s) of ${suspended} resolved\n`)
  for (const bad of [['report', 'resolve', String(last!.id)], ['report', 'resolve', 'x', '--dismiss'], ['report', 'resolve', '1', '--dismiss', '--block-host']]) {
    assert.is((await admin(dir, bad)).status, 1, bad.join(' '))
  }
  assert.is((await admin(dir, ['report', 'resolve', '999999999', '--dismiss'])).stderr, 'link-service: no such report: 999999999\n')
  assert.is((await admin(dir, ['block', 'remove', `www.${host}`])).status, 0)
})

test('report list shows a report\'s text escaped: no escape sequence reaches the terminal; --json keeps the text as it was sent', async ({ dir }) => {
  const details = 'title \x1b]0;pwned\x07 clear \x1b[2J csi \u009b31m bidi \u202eevil.exe\u202c end'
  const code = await serving(dir, async (srv) => {
    const user = await newUser(srv.url)
    const link = await newLink(srv.url, user.token, 'https://escapes.example/')
    const res = await call(srv.url, 'POST', '/api/v1/reports', { body: { code: link.code, reason: 'other', details } })
    assert.is(res.status, 202)
    return link.code as string
  })
  const text = await admin(dir, ['report', 'list'])
  assert.is(text.status, 0, text.stderr)
  assert.not.match(text.stdout, /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]/, 'a control character was printed raw')
  assert.ok(text.stdout.includes('title \\x1b]0;pwned\\x07 clear \\x1b[2J csi \\x9b31m bidi \\u{202e}evil.exe'), text.stdout)
  const [listed] = await reportsOf(dir, code)
  assert.is(listed!.details, details)
})

test.run()
