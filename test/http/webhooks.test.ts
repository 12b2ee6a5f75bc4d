// Webhooks (Standard Webhooks): the endpoints' API, every link event signed and delivered from
// the outbox, at least once, with retries; deliveries, retry and test; an endpoint failing for
// days is turned off and says why.
import { Webhook } from 'standardwebhooks'
import * as assert from 'uvu/assert'
import { assertError, call, newLink, newUser, randomIp, uniqueName, type User } from '../helpers/api.js'
import { blockHost, unblockHost } from '../../src/admin/blocks.js'
import { Receiver } from '../helpers/receiver.js'
import { serverSuite, twoNodeSuite } from '../helpers/server.js'
import { sleep, until } from '../helpers/wait.js'
import { claimDue, releaseClaims } from '../../src/webhooks/queries.js'

const ENV = {
  WEBHOOK_ALLOW_HTTP: 'on',
  WEBHOOK_ALLOW_PRIVATE: 'on',
  WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1',
  WEBHOOK_POLL_MS: '200',
  VISIT_FLUSH_MS: '60000', // only the test's own flushes
}
const ALL = ['link.created', 'link.updated', 'link.deleted', 'link.expired', 'link.disabled', 'link.enabled', 'link.clicked']

const test = serverSuite<{ user: User; rx: Receiver; hook: any }>('webhooks', ENV)
test.before(async (ctx) => {
  ctx.user = await newUser(ctx.srv.url)
  ctx.rx = await new Receiver().start()
  const res = await call(ctx.srv.url, 'POST', '/api/v1/webhooks', { token: ctx.user.token, body: { url: ctx.rx.url, events: ALL } })
  assert.is(res.status, 201, res.text)
  ctx.hook = res.body
})
test.after(async (ctx) => ctx.rx?.stop())

const verify = (secret: string, r: { headers: Record<string, any>; body: string }) =>
  new Webhook(secret).verify(r.body, {
    'webhook-id': r.headers['webhook-id'],
    'webhook-timestamp': r.headers['webhook-timestamp'],
    'webhook-signature': r.headers['webhook-signature'],
  })

test('creating a webhook shows its whsec_ secret once; reads never show it', async ({ srv, user, hook }) => {
  assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  assert.equal(hook.events, ALL)
  assert.is(hook.enabled, true)
  assert.is(hook.disabled_reason, null)
  const one = await call(srv.url, 'GET', `/api/v1/webhooks/${hook.id}`, { token: user.token })
  assert.is(one.status, 200)
  assert.is(one.body.secret, undefined)
  const list = await call(srv.url, 'GET', '/api/v1/webhooks', { token: user.token })
  assert.equal(list.body.webhooks.map((w: any) => w.id), [hook.id])
  assert.is(list.body.webhooks[0].secret, undefined)
})

test('link.created arrives within 2 s, signed so that the standardwebhooks package verifies it', async ({ srv, user, rx, hook }) => {
  const started = Date.now()
  const link = await newLink(srv.url, user.token, 'https://example.com/created')
  await until(2_000, () => rx.of('link.created').some((r) => r.event.data.code === link.code))
  const got = rx.of('link.created').find((r) => r.event.data.code === link.code)!
  assert.ok(got.at - started <= 2_000)
  const verified = verify(hook.secret, got) as any
  assert.is(verified.type, 'link.created')
  assert.is(verified.data.url, 'https://example.com/created')
  assert.is(verified.data.short_url, link.short_url)
  assert.match(got.event.timestamp, /^\d{4}-\d\d-\d\dT/)
  // Tampering breaks the signature.
  assert.throws(() => verify(hook.secret, { ...got, body: got.body.replace('created', 'Created') }))
  assert.throws(() => verify(`whsec_${Buffer.alloc(32).toString('base64')}`, got))
})

test('link.updated and link.deleted follow a change and a delete', async ({ srv, user, rx }) => {
  const link = await newLink(srv.url, user.token)
  await call(srv.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body: { url: 'https://example.com/changed' } })
  await call(srv.url, 'DELETE', `/api/v1/links/${link.code}`, { token: user.token })
  await until(3_000, () => rx.of('link.deleted').some((r) => r.event.data.code === link.code))
  const updated = rx.of('link.updated').filter((r) => r.event.data.code === link.code)
  assert.is(updated.length, 1)
  assert.is(updated[0]!.event.data.url, 'https://example.com/changed')
})

test('link.updated follows a change of any field an owner sets, and carries them as the API shows them (never the password)', async ({ srv, user, rx }) => {
  const link = await newLink(srv.url, user.token)
  const changes = [
    { tags: ['Spring'] },
    { password: 'a long secret phrase' },
    { title: 'A card', description: 'Its text', image_url: 'https://example.com/card.png' },
    { rules: [{ if: { device: 'android' }, url: 'https://m.example.com/' }] },
    { starts_at: '2020-01-01T00:00:00Z', max_visits: 10 },
  ]
  for (const body of changes) assert.is((await call(srv.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body })).status, 200, JSON.stringify(body))
  const of = () => rx.of('link.updated').filter((r) => r.event.data.code === link.code)
  await until(3_000, () => of().length === changes.length)
  const last = of().sort((a, b) => a.event.data.updated_at.localeCompare(b.event.data.updated_at)).at(-1)!.event.data
  const shown = (await call(srv.url, 'GET', `/api/v1/links/${link.code}`, { token: user.token })).body
  for (const field of ['tags', 'password_protected', 'title', 'description', 'image_url', 'rules', 'max_visits'] as const) {
    assert.equal(last[field], shown[field], field)
  }
  assert.is(Date.parse(last.starts_at), Date.parse(shown.starts_at))
  assert.not.ok(JSON.stringify(of().map((r) => r.event)).includes('argon2'), 'no password hash in an event')
  // A PATCH that changes nothing an owner sees sends nothing.
  assert.is((await call(srv.url, 'PATCH', `/api/v1/links/${link.code}`, { token: user.token, body: { tags: ['Spring'] } })).status, 200)
  await sleep(500)
  assert.is(of().length, changes.length)
})

test('link.clicked: one event per link per flush, with the count and its split', async ({ srv, user, rx }) => {
  const link = await newLink(srv.url, user.token)
  const ip = randomIp()
  await Promise.all([0, 1, 2].map(() => fetch(`${srv.url}/r/${link.code}`, { redirect: 'manual', headers: { 'x-forwarded-for': ip, 'user-agent': 'Mozilla/5.0 Firefox/120.0', referer: 'https://news.example/' } })))
  await fetch(`${srv.url}/r/${link.code}`, { redirect: 'manual', headers: { 'x-forwarded-for': ip, 'user-agent': 'Googlebot/2.1' } })
  await srv.service.deps.visits.flush()
  await until(3_000, () => rx.of('link.clicked').some((r) => r.event.data.code === link.code))
  await sleep(300)
  const clicks = rx.of('link.clicked').filter((r) => r.event.data.code === link.code)
  assert.is(clicks.length, 1, 'one flush, one event')
  const d = clicks[0]!.event.data
  assert.is(d.count, 4)
  assert.is(d.humans, 3)
  assert.is(d.bots, 1)
  assert.equal(d.referrers, { 'news.example': 3, direct: 1 })
})

test('link.disabled and link.enabled follow an operator (or reports) stopping a link and letting it go', async ({ srv, user, rx }) => {
  const link = await newLink(srv.url, user.token)
  const sql = srv.service.db.sql
  // What `link-service link disable/enable` and a suspension by reports write (sql/0007, 0012).
  await sql`update links set disabled_at = now(), disabled_reason = 'phishing' where code = ${link.code}`
  await sql`update links set disabled_at = null, disabled_reason = null where code = ${link.code}`
  await sql`update links set suspended_at = now() where code = ${link.code}`
  const of = (type: string) => rx.of(type).filter((r) => r.event.data.code === link.code)
  await until(3_000, () => of('link.disabled').length === 2 && of('link.enabled').length === 1)
  const [byOperator, byReports] = of('link.disabled').sort((a, b) => a.event.timestamp.localeCompare(b.event.timestamp))
  assert.equal([byOperator!.event.data.reason, byOperator!.event.data.disabled], ['phishing', true])
  assert.match(byReports!.event.data.reason, /reported/)
  assert.is(rx.of('link.enabled').filter((r) => r.event.data.code === link.code).length, 1)
  assert.not.ok(rx.of('link.updated').some((r) => r.event.data.code === link.code), 'no link.updated for these')
})

test('link.expired is sent once, when the expiry passes', async ({ srv, user, rx }) => {
  const expires = new Date(Date.now() + 1_500).toISOString()
  const res = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/soon', expires_at: expires } })
  assert.is(res.status, 201)
  await until(5_000, () => rx.of('link.expired').some((r) => r.event.data.code === res.body.code))
  await sleep(1_000)
  const expired = rx.of('link.expired').filter((r) => r.event.data.code === res.body.code)
  assert.is(expired.length, 1)
  assert.is(new Date(expired[0]!.event.data.expires_at).getTime(), new Date(expires).getTime())
})

test('every link event carries the link as the API shows it: link.expired\'s payload has the fields of the others, and `disabled` means what the API\'s means', async ({ srv, user, rx }) => {
  const host = `${uniqueName('feed')}.example`
  const expires = new Date(Date.now() + 1_500).toISOString()
  const res = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: `https://${host}/soon`, expires_at: expires, tags: ['launch'], title: 'Soon' } })
  assert.is(res.status, 201)
  const code: string = res.body.code
  await blockHost(srv.service.db.sql, host)
  try {
    await until(5_000, () => rx.of('link.expired').some((r) => r.event.data.code === code))
    const created = rx.of('link.created').find((r) => r.event.data.code === code)!.event.data
    const expired = rx.of('link.expired').find((r) => r.event.data.code === code)!.event.data
    assert.equal(Object.keys(expired).sort(), Object.keys(created).sort())
    assert.equal([expired.tags, expired.title, expired.max_visits, expired.password_protected], [['launch'], 'Soon', null, false])
    // Its host is blocked: the API says disabled, and so does the event.
    const link = await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })
    assert.equal([link.body.disabled, expired.disabled], [true, true])
  } finally {
    await unblockHost(srv.service.db.sql, host)
  }
})

test('an endpoint subscribed to other events gets none of these; another owner\'s links are not its business', async ({ srv, rx }) => {
  const other = await newUser(srv.url)
  const hook = await call(srv.url, 'POST', '/api/v1/webhooks', { token: other.token, body: { url: rx.url, events: ['link.deleted'] } })
  const link = await newLink(srv.url, other.token)
  await sleep(800)
  const deliveries = await call(srv.url, 'GET', `/api/v1/webhooks/${hook.body.id}/deliveries`, { token: other.token })
  assert.equal(deliveries.body.deliveries, [])
  assert.not.ok(rx.received.some((r) => r.event.data.code === link.code))
})

test('a receiver that is down gets every event once it is back, each id once', async ({ srv, user, rx }) => {
  await rx.stop()
  const links: any[] = []
  for (let i = 0; i < 5; i++) links.push(await newLink(srv.url, user.token, `https://example.com/down/${i}`))
  await sleep(2_500) // a few failed attempts
  await rx.start()
  await until(10_000, () => links.every((l) => rx.of('link.created').some((r) => r.event.data.code === l.code)))
  const ids = rx.received.map((r) => r.headers['webhook-id'])
  assert.is(new Set(ids).size, ids.length, 'no event twice')
})

test('deliveries list each attempt (time, status or error, duration); retry sends the same message again', async ({ srv, user, rx, hook }) => {
  rx.status = 500
  const link = await newLink(srv.url, user.token)
  const find = async () => {
    const res = await call(srv.url, 'GET', `/api/v1/webhooks/${hook.id}/deliveries`, { token: user.token })
    assert.is(res.status, 200)
    return res.body.deliveries.find((d: any) => d.event === 'link.created' && d.attempts.length >= 2 && d.attempts.every((a: any) => a.status_code === 500))
  }
  let failing: any
  await until(6_000, async () => (failing = await find()) !== undefined)
  rx.status = 200
  assert.is(failing.attempts[0].status_code, 500)
  assert.is(failing.attempts[0].error, 'answered 500')
  assert.type(failing.attempts[0].duration_ms, 'number')
  assert.match(failing.attempts[0].attempted_at, /Z$/)
  await until(4_000, () => rx.of('link.created').some((r) => r.event.data.code === link.code))
  const first = rx.of('link.created').find((r) => r.event.data.code === link.code)!
  const retried = await call(srv.url, 'POST', `/api/v1/webhooks/${hook.id}/deliveries/${failing.id}/retry`, { token: user.token })
  assert.is(retried.status, 202)
  assert.is(retried.body.state, 'pending')
  await until(3_000, () => rx.of('link.created').filter((r) => r.event.data.code === link.code).length === 2)
  const again = rx.of('link.created').filter((r) => r.event.data.code === link.code)[1]!
  assert.is(again.headers['webhook-id'], first.headers['webhook-id'])
  assertError(await call(srv.url, 'POST', `/api/v1/webhooks/${hook.id}/deliveries/00000000-0000-0000-0000-000000000000/retry`, { token: user.token }), 404, 'DELIVERY_NOT_FOUND')
  assertError(await call(srv.url, 'POST', `/api/v1/webhooks/${hook.id}/deliveries/nope/retry`, { token: user.token }), 404, 'DELIVERY_NOT_FOUND')
})

test('POST /webhooks/{id}/test sends a webhook.test event', async ({ srv, user, rx, hook }) => {
  const res = await call(srv.url, 'POST', `/api/v1/webhooks/${hook.id}/test`, { token: user.token })
  assert.is(res.status, 202)
  assert.is(res.body.event, 'webhook.test')
  await until(3_000, () => rx.of('webhook.test').some((r) => r.headers['webhook-id'] === res.body.id))
  verify(hook.secret, rx.of('webhook.test')[0]!)
})

test('an endpoint failing for 5 days is turned off, and its owner sees why; turning it on clears that', async ({ srv, rx }) => {
  const owner = await newUser(srv.url)
  const hook = (await call(srv.url, 'POST', '/api/v1/webhooks', { token: owner.token, body: { url: rx.url, events: ['link.created'] } })).body
  await srv.service.db.sql`update webhooks set failing_since = now() - interval '5 days 1 minute' where id = ${hook.id}`
  rx.status = 503
  await newLink(srv.url, owner.token)
  await until(4_000, async () => (await call(srv.url, 'GET', `/api/v1/webhooks/${hook.id}`, { token: owner.token })).body.enabled === false)
  rx.status = 200
  const off = await call(srv.url, 'GET', `/api/v1/webhooks/${hook.id}`, { token: owner.token })
  assert.match(off.body.disabled_reason, /failed for 5 days/)
  const on = await call(srv.url, 'PATCH', `/api/v1/webhooks/${hook.id}`, { token: owner.token, body: { enabled: true } })
  assert.is(on.body.enabled, true)
  assert.is(on.body.disabled_reason, null)
})

test('PATCH changes url, events and enabled; DELETE removes it; another owner gets 404', async ({ srv, user, rx }) => {
  const made = (await call(srv.url, 'POST', '/api/v1/webhooks', { token: user.token, body: { url: rx.url, events: ['link.created'] } })).body
  const patched = await call(srv.url, 'PATCH', `/api/v1/webhooks/${made.id}`, { token: user.token, body: { events: ['link.deleted', 'link.deleted'], enabled: false } })
  assert.is(patched.status, 200)
  assert.equal(patched.body.events, ['link.deleted'])
  assert.is(patched.body.enabled, false)
  const stranger = await newUser(srv.url)
  assertError(await call(srv.url, 'GET', `/api/v1/webhooks/${made.id}`, { token: stranger.token }), 404, 'WEBHOOK_NOT_FOUND')
  assertError(await call(srv.url, 'PATCH', `/api/v1/webhooks/${made.id}`, { token: stranger.token, body: { enabled: true } }), 404, 'WEBHOOK_NOT_FOUND')
  assertError(await call(srv.url, 'GET', '/api/v1/webhooks/not-a-uuid', { token: user.token }), 404, 'WEBHOOK_NOT_FOUND')
  assertError(await call(srv.url, 'PATCH', `/api/v1/webhooks/${made.id}`, { token: user.token, body: { events: ['link.visited'], enabled: 'yes' } }), 422, 'INVALID_FORM_BODY')
  assert.is((await call(srv.url, 'DELETE', `/api/v1/webhooks/${made.id}`, { token: user.token })).status, 204)
  assertError(await call(srv.url, 'DELETE', `/api/v1/webhooks/${made.id}`, { token: user.token }), 404, 'WEBHOOK_NOT_FOUND')
})

test('at most 5 webhooks per account: the sixth is 409 WEBHOOK_LIMIT_EXCEEDED', async ({ srv, rx }) => {
  const owner = await newUser(srv.url)
  const create = () => call(srv.url, 'POST', '/api/v1/webhooks', { token: owner.token, body: { url: rx.url, events: ['link.created'] } })
  const all = await Promise.all([0, 1, 2, 3, 4, 5, 6].map(create))
  assert.is(all.filter((r) => r.status === 201).length, 5)
  for (const r of all.filter((r) => r.status !== 201)) assertError(r, 409, 'WEBHOOK_LIMIT_EXCEEDED')
})

test('bad webhook fields are 422 with each field named', async ({ srv, user }) => {
  const res = await call(srv.url, 'POST', '/api/v1/webhooks', { token: user.token, body: { url: 'ftp://x.example/', events: [] } })
  assertError(res, 422, 'INVALID_FORM_BODY')
  assert.equal(res.body.errors.map((e: any) => e.field), ['url', 'events'])
  assertError(await call(srv.url, 'POST', '/api/v1/webhooks', { body: { url: 'https://x.example/', events: ['link.created'] } }), 401, 'UNAUTHORIZED')
})

test.run()

const nodes = twoNodeSuite('webhooks on two nodes')
nodes('two nodes claiming at once never take the same delivery', async ({ a, b }) => {
  // Their own loops stopped, so that the claims below are the only ones (and nothing is sent).
  await a.service.webhooks.stop()
  await b.service.webhooks.stop()
  const user = await newUser(a.url)
  const hook = (await call(a.url, 'POST', '/api/v1/webhooks', { token: user.token, body: { url: 'https://example.com/', events: ['link.created'] } })).body
  for (let i = 0; i < 20; i++) await newLink(a.url, user.token)
  // A shared database may hold other suites' due deliveries too, claimed before these (the
  // oldest first): the nodes claim at once, round after round, until this endpoint's 20 are out.
  const all: string[] = []
  let mine = 0
  for (let round = 0; round < 50 && mine < 20; round++) {
    const claims = (await Promise.all([0, 1, 2, 3].map((i) => claimDue((i % 2 === 0 ? a : b).service.db.sql, 10)))).flat()
    if (claims.length === 0) break
    all.push(...claims.map((c) => c.id))
    mine += claims.filter((c) => c.webhook_id === hook.id).length
  }
  assert.is(new Set(all).size, all.length, 'no delivery claimed twice')
  assert.is(mine, 20)
  // A claimed (leased) delivery is not claimed again while its lease runs.
  assert.equal((await claimDue(a.service.db.sql, 50)).filter((c) => all.includes(c.id)), [])
})
nodes('a claim given back is due again at once and not counted as an attempt; only the current claim is given back', async ({ a, b }) => {
  await a.service.webhooks.stop()
  await b.service.webhooks.stop()
  const sql = a.service.db.sql
  const user = await newUser(a.url)
  const hook = (await call(a.url, 'POST', '/api/v1/webhooks', { token: user.token, body: { url: 'https://example.com/', events: ['link.created'] } })).body
  await newLink(a.url, user.token)
  const mine = async () => (await claimDue(sql, 1_000)).filter((c) => c.webhook_id === hook.id)
  const [first] = await mine()
  assert.is(first!.attempts, 1)
  await releaseClaims(sql, [first!])
  const [again] = await mine()
  assert.ok(again, 'due again at once, not after its lease')
  assert.is(again!.id, first!.id)
  assert.is(again!.attempts, 1, 'the claim given back did not count as an attempt')
  // A claim that is no longer the current one (another node's lease ran out and it claimed again) gives back nothing.
  await releaseClaims(sql, [{ ...again!, attempts: 0 }])
  assert.equal(await mine(), [], 'still leased by the current claim')
})
nodes.run()

// A node with 2 slots and a burst of 40 events: what it claims ahead waits in its queue, and
// every event arrives, once.
const burst = serverSuite<{ rx: Receiver }>('webhooks: a burst beyond the slots', { ...ENV, WEBHOOK_CONCURRENCY: '2' })
burst.before(async (ctx) => {
  ctx.rx = await new Receiver().start()
})
burst.after(async (ctx) => ctx.rx?.stop())
burst('a burst beyond the slots is claimed ahead and queued: every event arrives once', async ({ srv, rx }) => {
  const user = await newUser(srv.url)
  assert.is((await call(srv.url, 'POST', '/api/v1/webhooks', { token: user.token, body: { url: rx.url, events: ['link.created'] } })).status, 201)
  for (const round of [0, 1]) {
    const items = Array.from({ length: 20 }, (_, i) => ({ url: `https://example.com/${round}/${i}` }))
    const res = await call(srv.url, 'POST', '/api/v1/links/bulk', { token: user.token, body: { items } })
    assert.is(res.status, 200, res.text)
  }
  await until(10_000, () => rx.of('link.created').length >= 40)
  await sleep(300)
  const ids = rx.of('link.created').map((r) => r.headers['webhook-id'])
  assert.is(ids.length, 40)
  assert.is(new Set(ids).size, 40, 'each event once')
})
burst.run()
