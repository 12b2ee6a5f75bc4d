// link-service link ...: an operator's view of every account's links, and a stop on
// one, checked through a real service (see users.test.ts for how the CLI and the service share
// the database on each engine).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, type User } from '../helpers/api.js'
import { admin, adminLog, assertFields, cliDataDir, withServer } from '../helpers/cli.js'

const test = suite<{ dir: string | undefined; user: User; code: string }>('link-service link')
test.before(async (ctx) => {
  ctx.dir = await cliDataDir()
})
test.before.each(async (ctx) => {
  await withServer(ctx.dir, async (srv) => {
    ctx.user = await newUser(srv.url)
    ctx.code = (await newLink(srv.url, ctx.user.token, 'https://example.com/doc')).code
  })
})

test('link disable: the code answers 410 LINK_DISABLED; its owner sees "disabled": true and may delete it, not change it', async ({ dir, user, code }) => {
  const r = await admin(dir, ['link', 'disable', code, '--reason', 'phishing report 42'])
  assert.is(r.status, 0, r.stderr)
  assert.is(r.stdout, `disabled ${code}\n`)
  assertFields(adminLog(r)[0], { action: 'link.disable', code, reason: 'phishing report 42', changed: true })
  await withServer(dir, async (srv) => {
    const token = user.token
    for (const method of ['GET', 'HEAD']) {
      const gone = await call(srv.url, method, `/r/${code}`)
      assert.is(gone.status, 410, method)
      if (method === 'GET') assert.is(gone.body.code, 'LINK_DISABLED')
    }
    const own = await call(srv.url, 'GET', `/api/v1/links/${code}`, { token })
    assert.is(own.body.disabled, true)
    assert.is(own.body.disabled_reason, undefined, "the operator's note is not the owner's to see")
    assert.is((await call(srv.url, 'GET', '/api/v1/links', { token })).body.links[0].disabled, true)
    for (const body of [{ url: 'https://example.com/other' }, { expires_at: null }]) {
      const patch = await call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token, body })
      assert.equal([patch.status, patch.body.code], [403, 'LINK_DISABLED'], JSON.stringify(body))
    }
    const other = await newUser(srv.url)
    const foreign = await call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token: other.token, body: { url: 'https://example.com/' } })
    assert.is(foreign.status, 404, "someone else's disabled link is still not found")
  })
  const on = await admin(dir, ['link', 'enable', code, '--json'])
  assert.equal(JSON.parse(on.stdout), { action: 'link.enable', code, changed: true })
  await withServer(dir, async (srv) => {
    assert.is((await call(srv.url, 'GET', `/r/${code}`)).headers.get('location'), 'https://example.com/doc')
    assert.is((await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })).body.disabled, false)
    assert.is((await call(srv.url, 'PATCH', `/api/v1/links/${code}`, { token: user.token, body: { url: 'https://example.com/b' } })).status, 200)
  })
})

test('the owner may delete a disabled link: its code then answers 404 like any deleted one', async ({ dir, user, code }) => {
  assert.is((await admin(dir, ['link', 'disable', code])).status, 0)
  await withServer(dir, async (srv) => {
    assert.is((await call(srv.url, 'DELETE', `/api/v1/links/${code}`, { token: user.token })).status, 204)
    assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 404)
  })
  const r = await admin(dir, ['link', 'enable', code])
  assert.is(r.stderr, `link-service: no such link: ${code}\n`, 'a deleted link is no more')
})

test('link list shows every account\'s links, or one account\'s with --user, with the operator\'s reason', async ({ dir, user, code }) => {
  await admin(dir, ['link', 'disable', code, '--reason', 'spam'])
  const mine = await admin(dir, ['link', 'list', '--user', user.username, '--json'])
  assert.is(mine.status, 0, mine.stderr)
  const links = JSON.parse(mine.stdout) as Array<Record<string, unknown>>
  assert.is(links.length, 1)
  assertFields(links[0], { code, username: user.username, url: 'https://example.com/doc', disabled: true, disabled_reason: 'spam', owner_disabled: false, host_blocked: false })
  const all = await admin(dir, ['link', 'list'])
  assert.match(all.stdout, /^CODE +USER +STATE/)
  assert.match(all.stdout, new RegExp(`${code} +${user.username} +disabled `))
  const none = await admin(dir, ['link', 'list', '--user', 'nobody-at-all'])
  assert.is(none.stdout, 'no links\n')
})

test('a malformed or unknown code, or a missing argument, is refused in one line with status 1', async ({ dir }) => {
  for (const args of [['link', 'disable', 'short'], ['link', 'enable', 'ZZZZZZZZ'], ['link', 'disable'], ['link', 'disable', 'a', '--reason']]) {
    const r = await admin(dir, args)
    assert.is(r.status, 1, args.join(' '))
    assert.is(r.stderr.trimEnd().split('\n').length, 1, r.stderr)
  }
})

test.run()
