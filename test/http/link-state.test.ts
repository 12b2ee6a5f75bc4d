// One decision of a link's state (src/links/link-state.ts): whatever the cache holds, /r/{code}
// and /r/{code}/preview, as JSON and as pages for people, give the same answer for a link at two
// stops at once, in the one order: stopped by an operator, expired, not started, used up, password.
import * as assert from 'uvu/assert'
import { disableLink } from '../../src/admin/links.js'
import { call, newUser, type User } from '../helpers/api.js'
import { serverSuite, type TestServer } from '../helpers/server.js'

const BROWSER = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }

type StopName = 'disabled' | 'expired' | 'not started' | 'exhausted' | 'password'
const ORDER: StopName[] = ['disabled', 'expired', 'not started', 'exhausted', 'password']
/** What each stop answers: the JSON's status and code, and the page's heading. */
const ANSWER: Record<StopName, [number, string, RegExp]> = {
  disabled: [410, 'LINK_DISABLED', /has been disabled/],
  expired: [410, 'LINK_EXPIRED', /has expired/],
  'not started': [404, 'LINK_NOT_FOUND', /does not exist/],
  exhausted: [410, 'LINK_EXHAUSTED', /has been used up/],
  password: [401, 'LINK_PASSWORD_REQUIRED', /is protected/],
}

/** A link at both stops: made with a cap and a password as needed, then put there in the database. */
async function linkAt(srv: TestServer, user: User, stops: StopName[]): Promise<string> {
  const body: Record<string, unknown> = { url: 'https://example.com/guarded-destination', max_visits: 5 }
  if (stops.includes('password')) body.password = 'open sesame'
  const res = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body })
  assert.is(res.status, 201, res.text)
  const code: string = res.body.code
  const sql = srv.service.db.sql
  if (stops.includes('disabled')) await disableLink(sql, code, 'spam')
  if (stops.includes('expired')) await sql`update links set expires_at = now() - interval '1 minute' where code = ${code}`
  if (stops.includes('not started')) await sql`update links set starts_at = now() + interval '1 day' where code = ${code}`
  if (stops.includes('exhausted')) await sql`update link_caps set visits_left = 0 where code = ${code}`
  return code
}

/** Every way a visitor may ask, each answer as [status, code or heading]. */
async function answers(srv: TestServer, code: string): Promise<Array<[string, number, string]>> {
  const json = async (path: string) => {
    const res = await call(srv.url, 'GET', path)
    return [path, res.status, res.body.code] as [string, number, string]
  }
  const page = async (path: string) => {
    const res = await call(srv.url, 'GET', path, { headers: BROWSER })
    return [`${path} (page)`, res.status, /<h1>([^<]*)<\/h1>/.exec(res.text)?.[1] ?? res.text.slice(0, 80)] as [string, number, string]
  }
  srv.service.deps.cache.clear()
  return [
    await json(`/r/${code}`), // a cache miss: decided after the read
    await json(`/r/${code}`), // a cache hit: decided from what the cache holds
    await json(`/r/${code}/preview`),
    await page(`/r/${code}`),
    await page(`/r/${code}/preview`),
  ]
}

const test = serverSuite<{ user: User }>('one decision of a link\'s state')
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
})

test('every pair of stops answers the same at /r/{code} and /r/{code}/preview, as JSON and as a page: the first in the one order', async ({ srv, user }) => {
  for (let i = 0; i < ORDER.length; i++) {
    for (let j = i + 1; j < ORDER.length; j++) {
      const pair = [ORDER[i]!, ORDER[j]!]
      const code = await linkAt(srv, user, pair)
      const [status, errorCode, heading] = ANSWER[ORDER[i]!]
      for (const [path, gotStatus, got] of await answers(srv, code)) {
        const where = `${pair.join(' + ')}: ${path}`
        assert.is(gotStatus, status, where)
        if (path.endsWith('(page)')) assert.match(got, heading, where)
        else assert.is(got, errorCode, where)
      }
    }
  }
})

test('a password link\'s preview shows nothing of its destination, as JSON or as a page', async ({ srv, user }) => {
  const code = await linkAt(srv, user, ['password'])
  for (const headers of [{}, BROWSER]) {
    const res = await call(srv.url, 'GET', `/r/${code}/preview`, { headers })
    assert.is(res.status, 401)
    assert.not.match(res.text, /guarded-destination|example\.com/)
  }
  const page = await call(srv.url, 'GET', `/r/${code}/preview`, { headers: BROWSER })
  // From /r/{code}/preview the form's relative action reaches /r/{code}/unlock.
  assert.match(page.text, /<form method="post" action="unlock">/)
})

test('a capped link found used up by the redirect still expires first once its expiry passes, from the cache as from the database', async ({ srv, user }) => {
  const expiresAt = new Date(Date.now() + 1500).toISOString()
  const res = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/', max_visits: 1, expires_at: expiresAt } })
  const code: string = res.body.code
  assert.is((await call(srv.url, 'GET', `/r/${code}`)).status, 302)
  // The cap is met: the cache now holds the link as used up.
  assert.is((await call(srv.url, 'GET', `/r/${code}`)).body.code, 'LINK_EXHAUSTED')
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(expiresAt) - Date.now() + 50)))
  assert.is((await call(srv.url, 'GET', `/r/${code}`)).body.code, 'LINK_EXPIRED', 'from the cache')
  assert.is((await call(srv.url, 'GET', `/r/${code}/preview`)).body.code, 'LINK_EXPIRED', 'the preview')
  srv.service.deps.cache.clear()
  assert.is((await call(srv.url, 'GET', `/r/${code}`)).body.code, 'LINK_EXPIRED', 'after a read')
})

test.run()
