// Webhook delivery over time and across nodes, end to end with a local receiver: a receiver down
// for 30 s gets every event of that time once it is back (a retry schedule of seconds), and two
// nodes delivering from one outbox never send one attempt twice.
import * as assert from 'uvu/assert'
import { call, newLink, newUser } from '../helpers/api.js'
import { Receiver } from '../helpers/receiver.js'
import { serverSuite, twoNodeSuite } from '../helpers/server.js'
import { sleep, until } from '../helpers/wait.js'

const ENV = {
  WEBHOOK_ALLOW_HTTP: 'on',
  WEBHOOK_ALLOW_PRIVATE: 'on',
  // 1 s, 2 s, then every 4 s: an endpoint back after 30 s is tried again within 4 s.
  WEBHOOK_RETRY_SCHEDULE: '1,2,4,4,4,4,4,4,4,4,4,4,4,4,4',
  WEBHOOK_POLL_MS: '200',
  VISIT_FLUSH_MS: '300',
}
const EVENTS = ['link.created', 'link.updated', 'link.deleted', 'link.clicked']

const outage = serverSuite('webhooks: a receiver down for 30 s', ENV)

outage('a receiver down for 30 s gets every event of that time once it is back, each once, link.clicked with its count', async ({ srv }) => {
  const rx = await new Receiver().start()
  try {
    const user = await newUser(srv.url)
    const hook = await call(srv.url, 'POST', '/api/v1/webhooks', { token: user.token, body: { url: rx.url, events: EVENTS } })
    assert.is(hook.status, 201)
    await rx.stop()
    const down = Date.now()
    const links = await Promise.all([0, 1, 2].map((i) => newLink(srv.url, user.token, `https://example.com/outage/${i}`)))
    assert.is((await call(srv.url, 'PATCH', `/api/v1/links/${links[0].code}`, { token: user.token, body: { url: 'https://example.com/outage/changed' } })).status, 200)
    assert.is((await call(srv.url, 'DELETE', `/api/v1/links/${links[2].code}`, { token: user.token })).status, 204)
    const ua = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0' }
    await Promise.all([0, 1, 2].map(() => fetch(`${srv.url}/r/${links[1].code}`, { redirect: 'manual', headers: ua })))
    await until(5_000, async () => (await call(srv.url, 'GET', `/api/v1/links/${links[1].code}`, { token: user.token })).body.visits === 3)
    await sleep(Math.max(0, 30_000 - (Date.now() - down)))
    // Meanwhile every delivery was tried, and failed, more than once.
    const during = (await call(srv.url, 'GET', `/api/v1/webhooks/${hook.body.id}/deliveries`, { token: user.token })).body.deliveries
    // link.clicked is one event per flush: the three visits are usually one, but a flush that
    // falls between them makes two, which together hold the three visits.
    const clicks = during.length - 5
    assert.ok(clicks === 1 || clicks === 2, `three created, one updated, one deleted, and one or two clicked: ${during.length}`)
    assert.ok(during.every((d: any) => d.state === 'pending' && d.attempts.length >= 3 && d.attempts.every((a: any) => a.error !== null)), JSON.stringify(during.map((d: any) => d.attempts.length)))
    await rx.start()
    await until(10_000, () => rx.received.length >= during.length)
    await sleep(1_000) // nothing more comes
    assert.equal(rx.received.map((r) => r.event.type).sort(), [...Array(clicks).fill('link.clicked'), 'link.created', 'link.created', 'link.created', 'link.deleted', 'link.updated'])
    const ids = rx.received.map((r) => r.headers['webhook-id'])
    assert.is(new Set(ids).size, during.length, 'each event once')
    assert.equal(new Set(ids), new Set(during.map((d: any) => d.id)))
    const clicked = rx.of('link.clicked').map((r) => r.event.data)
    assert.equal([...new Set(clicked.map((c) => c.code))], [links[1].code])
    assert.is(clicked.reduce((n, c) => n + c.count, 0), 3, 'the clicked events hold the three visits')
    assert.is(rx.of('link.updated')[0]!.event.data.url, 'https://example.com/outage/changed')
    assert.is(rx.of('link.deleted')[0]!.event.data.code, links[2].code)
  } finally {
    await rx.stop()
  }
})

outage.run()

if (process.env.DATABASE_URL === undefined) {
  process.stdout.write('webhooks-delivery.test: the two-node part not run: it needs DATABASE_URL (npm test runs it in .ci/run)\n')
} else {
  const nodes = twoNodeSuite('webhooks: two nodes delivering from one outbox', ENV)

  nodes('two nodes delivering at once send each event once: no attempt twice', async ({ a, b }) => {
    const rx = await new Receiver().start()
    try {
      const user = await newUser(a.url)
      for (let i = 0; i < 2; i++) {
        const hook = await call(a.url, 'POST', '/api/v1/webhooks', { token: user.token, body: { url: `${rx.url}?n=${i}`, events: ['link.created'] } })
        assert.is(hook.status, 201)
      }
      // Creates on both nodes, so that both are woken (NOTIFY) and both claim.
      const links = await Promise.all(Array.from({ length: 40 }, (_, i) => newLink(i % 2 === 0 ? a.url : b.url, user.token, `https://example.com/two/${i}`)))
      await until(15_000, () => rx.received.length >= 80)
      await sleep(1_500) // nothing more comes
      const ids = rx.received.map((r) => r.headers['webhook-id'])
      assert.is(ids.length, 80, 'each link, to each endpoint')
      assert.is(new Set(ids).size, 80, 'no event sent twice')
      assert.equal(new Set(rx.received.map((r) => r.event.data.code)), new Set(links.map((l) => l.code)))
    } finally {
      await rx.stop()
    }
  })

  nodes.run()
}
