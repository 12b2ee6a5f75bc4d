// The end to end: after a report is resolved with `report resolve --block-host`, the
// transparency report counts it with a time to action and the links it stopped, and with
// PUBLIC_BLOCKLIST=on the host is in /blocklist.txt (a threat feed's host is not), with an ETag
// and Last-Modified that answer 304 until the list changes; another instance subscribes to it.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, uniqueName } from '../helpers/api.js'
import { admin, cliDataDir } from '../helpers/cli.js'
import { startServer, type TestServer } from '../helpers/server.js'
import { sleep, until } from '../helpers/wait.js'

const test = suite<{ dir: string | undefined }>('transparency and the published block list')
test.before(async (ctx) => {
  ctx.dir = await cliDataDir()
})

async function serving<T>(dir: string | undefined, use: (srv: TestServer) => Promise<T>): Promise<T> {
  const srv = await startServer({ ...(dir === undefined ? {} : { DATA_DIR: dir }), PUBLIC_BLOCKLIST: 'on', SECURITY_CONTACT: 'mailto:security@example.com' })
  try {
    return await use(srv)
  } finally {
    await srv.close()
  }
}

type Month = Record<string, number | string | null>
const thisMonth = async (srv: TestServer): Promise<Month> => {
  const res = await call(srv.url, 'GET', '/transparency.json')
  assert.is(res.status, 200)
  return res.body.months[11] as Month
}
const delta = (after: Month, before: Month, key: string) => (after[key] as number) - (before[key] as number)

test('a report resolved with --block-host is counted with its time to action, and its host is published; a feed host is not', async ({ dir }) => {
  const host = `${uniqueName('bad')}.example`
  const feedHost = `${uniqueName('feed')}.example`
  const { before, reportId, user, spam } = await serving(dir, async (srv) => {
    // The document of the service's answers is checked by call(): security.txt too.
    assert.match((await call(srv.url, 'GET', '/.well-known/security.txt')).text, /^Contact: mailto:security@example\.com\nExpires: /)
    const before = await thisMonth(srv)
    const user = await newUser(srv.url)
    const link = await newLink(srv.url, user.token, `https://${host}/login`)
    await newLink(srv.url, user.token, `https://www.${host}/other`)
    await newLink(srv.url, user.token, `https://${feedHost}/x`)
    const spam = await newLink(srv.url, user.token, 'https://example.com/spam')
    const res = await call(srv.url, 'POST', '/api/v1/reports', { body: { code: link.code, reason: 'phishing' } })
    assert.is(res.status, 202)
    // A threat feed's entry: it stops the link on its host, and is never published.
    await srv.service.db.sql`insert into blocked_hosts (host, source) values (${feedHost}, 'https://feed.example/hosts.txt')`
    const [row] = await srv.service.db.sql<{ id: number }[]>`select id::int as id from reports where code = ${link.code}`
    return { before, reportId: row!.id, user, spam: spam.code as string }
  })
  await sleep(1_100) // a time to action of at least a second
  const resolved = await admin(dir, ['report', 'resolve', String(reportId), '--block-host'])
  assert.is(resolved.status, 0, resolved.stderr)
  assert.match(resolved.stdout, new RegExp(`^blocked ${host.replaceAll('.', '\\.')}; 1 open report`))
  // An operator disables one more link, then the account: a link and an account, counted once
  // each (the account's links stopping with it are not counted as links stopped).
  assert.is((await admin(dir, ['link', 'disable', spam])).status, 0)
  assert.is((await admin(dir, ['user', 'disable', user.username])).status, 0)
  assert.is((await admin(dir, ['user', 'disable', user.username])).status, 0, 'disabling it again counts nothing')

  const etag = await serving(dir, async (srv) => {
    const after = await thisMonth(srv)
    assert.is(delta(after, before, 'reports_received'), 1)
    assert.is(delta(after, before, 'reports_resolved'), 1)
    assert.is(delta(after, before, 'links_stopped_by_operator'), 3, 'both links on the host and its subdomain, and the one disabled')
    assert.is(delta(after, before, 'accounts_disabled'), 1)
    assert.is(delta(after, before, 'links_stopped_by_threat_feeds'), 1)
    assert.is(delta(after, before, 'links_stopped_by_health_checks'), 0)
    // The month's median is over every report resolved this month: on a PostgreSQL database other
    // suites share, theirs (resolved at once) outnumber this one, so this one's own is read too.
    const [own] = await srv.service.db.sql<{ seconds: number }[]>`select extract(epoch from resolved_at - created_at)::float8 as seconds from reports where id = ${reportId}`
    assert.ok(own!.seconds >= 1, `this report's time to action: ${own!.seconds} s`)
    if (dir !== undefined) assert.ok((after.time_to_action_median_seconds as number) >= 1, `median ${after.time_to_action_median_seconds}`)
    assert.ok((after.time_to_action_p90_seconds as number) >= (after.time_to_action_median_seconds as number))
    // counts only: nothing that names a person, a link or a host
    const text = (await call(srv.url, 'GET', '/transparency.json')).text + (await call(srv.url, 'GET', '/transparency')).text
    for (const name of [host, feedHost, user.username]) assert.not.ok(text.includes(name), name)

    const list = await call(srv.url, 'GET', '/blocklist.txt')
    assert.is(list.status, 200)
    assert.is(list.headers.get('content-type'), 'text/plain; charset=utf-8')
    assert.ok(list.text.split('\n').includes(`0.0.0.0 ${host}`), list.text)
    assert.not.ok(list.text.includes(feedHost), 'a threat feed host is not published')
    const etag = list.headers.get('etag')!
    const lastModified = list.headers.get('last-modified')!
    assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/)
    assert.ok(Math.abs(Date.parse(lastModified) - Date.now()) < 60_000, lastModified)
    const byTag = await call(srv.url, 'GET', '/blocklist.txt', { headers: { 'if-none-match': etag } })
    assert.equal([byTag.status, byTag.text, byTag.headers.get('etag')], [304, '', etag])
    const byDate = await call(srv.url, 'GET', '/blocklist.txt', { headers: { 'if-modified-since': lastModified } })
    assert.is(byDate.status, 304)
    const staleDate = new Date(Date.parse(lastModified) - 1_000).toUTCString()
    assert.is((await call(srv.url, 'GET', '/blocklist.txt', { headers: { 'if-modified-since': staleDate } })).status, 200)
    // If-None-Match decides when both are sent (RFC 9110 13.2.2)
    assert.is((await call(srv.url, 'GET', '/blocklist.txt', { headers: { 'if-none-match': '"other"', 'if-modified-since': lastModified } })).status, 200)

    // Another instance subscribes to it as to any feed, and gets the host (never the feed's).
    const subscriber = await startServer({ BLOCKLIST_SOURCES: `${srv.url}/blocklist.txt` })
    try {
      const source = `${srv.url}/blocklist.txt`
      await until(10_000, async () => (await subscriber.service.db.sql`select 1 from blocked_hosts where host = ${host} and source = ${source}`).length === 1)
      const fed = await subscriber.service.db.sql`select 1 from blocked_hosts where host = ${feedHost} and source = ${source}`
      assert.is(fed.length, 0)
    } finally {
      await subscriber.close()
    }
    return etag
  })

  // An unblock changes the list: a new ETag, and the old one no longer answers 304.
  await sleep(1_000) // Last-Modified has whole seconds
  assert.is((await admin(dir, ['block', 'remove', host])).status, 0)
  await serving(dir, async (srv) => {
    const res = await call(srv.url, 'GET', '/blocklist.txt', { headers: { 'if-none-match': etag } })
    assert.is(res.status, 200)
    assert.not.ok(res.text.includes(host))
    assert.is.not(res.headers.get('etag'), etag)
  })
})

test.run()
