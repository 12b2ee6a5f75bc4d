// link-service user ..., run as an operator would, its effects checked through a
// real service: on PostgreSQL the shared test database, on the embedded engine a DATA_DIR of this
// file's own, with the service stopped whenever the CLI runs.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, login, newLink, newUser, uniqueName } from '../helpers/api.js'
import { admin, adminLog, assertFields, cliDataDir, runCli, withServer } from '../helpers/cli.js'
import { startServer } from '../helpers/server.js'

const test = suite<{ dir: string | undefined }>('link-service user')
test.before(async (ctx) => {
  ctx.dir = await cliDataDir()
})

test('user create takes the password from stdin, never from an option; the account logs in with it', async ({ dir }) => {
  const name = uniqueName('Op')
  const r = await admin(dir, ['user', 'create', name, '--display-name', 'Ann Admin', '--json'], 'correct horse\n')
  assert.is(r.status, 0, r.stderr)
  const created = JSON.parse(r.stdout)
  assert.is(created.username, name.toLowerCase(), 'stored in lowercase, as registration does')
  assert.is(created.display_name, 'Ann Admin')
  const [line] = adminLog(r)
  assert.equal({ action: line!.action, username: line!.username }, { action: 'user.create', username: name.toLowerCase() })
  assert.not.match(r.stderr, /correct horse/, 'the password is never logged')
  const refused = await admin(dir, ['user', 'create', uniqueName(), '--password', 'correct horse'])
  assert.is(refused.status, 1)
  assert.match(refused.stderr, /^link-service: unknown option --password/)
  await withServer(dir, async (srv) => {
    const token = await login(srv.url, name.toLowerCase(), 'correct horse')
    assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token })).body.display_name, 'Ann Admin')
  })
})

test('user create validates as registration does: each refusal is one line and a non-zero status', async ({ dir }) => {
  const taken = uniqueName()
  assert.is((await admin(dir, ['user', 'create', taken], 'long enough\n')).status, 0)
  const cases: Array<[string[], string, RegExp]> = [
    [['user', 'create', uniqueName()], 'short\n', /password: .*8/],
    [['user', 'create', 'has space'], 'long enough\n', /username: /],
    [['user', 'create', uniqueName(), '--display-name', ' '], 'long enough\n', /display_name: /],
    [['user', 'create', taken.toUpperCase()], 'long enough\n', /username is already taken/],
    [['user', 'create', uniqueName()], '', /expected a password on standard input/],
    [['user', 'create'], 'long enough\n', /usage: link-service user create/],
  ]
  for (const [args, input, reason] of cases) {
    const r = await admin(dir, args, input)
    assert.is(r.status, 1, args.join(' '))
    assert.match(r.stderr, reason)
    assert.is(r.stderr.trimEnd().split('\n').length, 1, r.stderr)
  }
})

test('user disable: its sessions end, login answers 403 ACCOUNT_DISABLED only to the right password, its links answer 410; enable restores them', async ({ dir }) => {
  const { user, code } = await withServer(dir, async (srv) => {
    const user = await newUser(srv.url)
    return { user, code: (await newLink(srv.url, user.token)).code as string }
  })
  const off = await admin(dir, ['user', 'disable', user.username.toUpperCase()]) // names are stored in lowercase
  assert.is(off.status, 0, off.stderr)
  assertFields(adminLog(off)[0]!, { action: 'user.disable', username: user.username, changed: true, sessions_ended: 1 })
  await withServer(dir, async (srv) => {
    assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })).status, 401)
    const right = await call(srv.url, 'POST', '/api/v1/auth/login', { body: { username: user.username, password: user.password } })
    assert.equal([right.status, right.body.code], [403, 'ACCOUNT_DISABLED'])
    const wrong = await call(srv.url, 'POST', '/api/v1/auth/login', { body: { username: user.username, password: 'not the password' } })
    assert.equal([wrong.status, wrong.body.code], [401, 'INVALID_CREDENTIALS'], 'nothing is told to one without the password')
    const gone = await call(srv.url, 'GET', `/r/${code}`)
    assert.equal([gone.status, gone.body.code], [410, 'LINK_DISABLED'])
  })
  const again = await admin(dir, ['user', 'disable', user.username, '--json'])
  assert.equal(JSON.parse(again.stdout), { action: 'user.disable', username: user.username, changed: false, sessions_ended: 0 })
  const on = await admin(dir, ['user', 'enable', user.username])
  assert.is(on.status, 0, on.stderr)
  assert.match(on.stdout, /^enabled /)
  await withServer(dir, async (srv) => {
    await login(srv.url, user.username, user.password)
    assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 302)
  })
})

test('user reset-password: the new password from stdin logs in, the old one does not, and every session ends', async ({ dir }) => {
  const user = await withServer(dir, (srv) => newUser(srv.url))
  const short = await admin(dir, ['user', 'reset-password', user.username], 'short\n')
  assert.is(short.status, 1)
  assert.match(short.stderr, /password: /)
  const r = await admin(dir, ['user', 'reset-password', user.username, '--json'], 'a brand new password\n')
  assert.is(r.status, 0, r.stderr)
  assert.equal(JSON.parse(r.stdout), { action: 'user.reset-password', username: user.username, sessions_ended: 1 })
  assert.not.match(r.stderr, /brand new/)
  await withServer(dir, async (srv) => {
    assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })).status, 401)
    assert.is((await call(srv.url, 'POST', '/api/v1/auth/login', { body: { username: user.username, password: user.password } })).status, 401)
    await login(srv.url, user.username, 'a brand new password')
  })
})

test('user delete deletes as DELETE /users/me does: sessions end, links answer 404, their codes are never reassigned', async ({ dir }) => {
  const { user, code } = await withServer(dir, async (srv) => {
    const user = await newUser(srv.url)
    return { user, code: (await newLink(srv.url, user.token)).code as string }
  })
  const r = await admin(dir, ['user', 'delete', user.username])
  assert.is(r.status, 0, r.stderr)
  assert.match(r.stdout, /deleted .* and 1 link/)
  assertFields(adminLog(r)[0]!, { action: 'user.delete', username: user.username, links_deleted: 1 })
  await withServer(dir, async (srv) => {
    assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })).status, 401)
    assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 404)
    const other = await newUser(srv.url)
    const reuse = await call(srv.url, 'POST', '/api/v1/links', { token: other.token, body: { url: 'https://example.com/', code } })
    assert.is(reuse.body.code, 'CODE_TAKEN')
  })
})

test('user list shows every account with its state and live links, as text or --json', async ({ dir }) => {
  const user = await withServer(dir, async (srv) => {
    const user = await newUser(srv.url)
    await newLink(srv.url, user.token)
    return user
  })
  await admin(dir, ['user', 'disable', user.username])
  const r = await admin(dir, ['user', 'list', '--json'])
  assert.is(r.status, 0, r.stderr)
  const row = (JSON.parse(r.stdout) as Array<Record<string, unknown>>).find((u) => u.username === user.username)
  assertFields(row!, { id: user.id, disabled: true, links: 1 })
  const text = await admin(dir, ['user', 'list'])
  assert.match(text.stdout, /^USERNAME +STATE/)
  assert.match(text.stdout, new RegExp(`${user.username} +disabled +1 `))
})

test('an unknown username is refused in one line with status 1', async ({ dir }) => {
  for (const action of ['disable', 'enable', 'delete', 'reset-password']) {
    const r = await admin(dir, ['user', action, 'nobody-here'], 'long enough\n')
    assert.is(r.status, 1, action)
    assert.is(r.stderr, 'link-service: no such user: nobody-here\n')
  }
})

test('with the embedded engine, the DATA_DIR of a running service is refused: stop the service first', async ({ dir }) => {
  // On PostgreSQL the CLI and the nodes share the database: nothing to refuse.
  if (dir === undefined) return
  const srv = await startServer({ DATA_DIR: dir })
  try {
    const r = await runCli(['user', 'list'], { DATA_DIR: dir })
    assert.is(r.status, 1)
    assert.match(r.stderr, /stop the service first/)
    assert.is(r.stderr.trimEnd().split('\n').length, 1)
  } finally {
    await srv.close()
  }
})

test.run()
