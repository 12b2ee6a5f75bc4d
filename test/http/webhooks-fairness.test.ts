// Webhook deliveries are shared fairly: one account's stalled endpoints cannot hold everyone's
// deliveries (an account never takes the last slots; a stalled endpoint gets one), and test
// events and retries, which queue deliveries on demand, are limited per account.
import { createServer, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { test as unit } from 'uvu'
import * as assert from 'uvu/assert'
import { FairShares } from '../../src/webhooks/fair-shares.js'
import { call, newLink, newUser } from '../helpers/api.js'
import { Receiver } from '../helpers/receiver.js'
import { serverSuite } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

// Receivers on this machine, over http: the only settings changed.
const ENV = { WEBHOOK_ALLOW_HTTP: 'on', WEBHOOK_ALLOW_PRIVATE: 'on' }

/** An endpoint that accepts every request and never answers. */
async function stallingServer(): Promise<{ url: string; close: () => void }> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((req) => req.resume())
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const s of sockets) s.destroy()
      server.close()
    },
  }
}

const test = serverSuite('webhooks: fair shares', ENV)

test('100 test events in a row from one account meet at least 50 × 429 with Retry-After; another account is not limited by them', async ({ srv }) => {
  const rx = await new Receiver().start()
  try {
    const user = await newUser(srv.url)
    const hook = await call(srv.url, 'POST', '/api/v1/webhooks', { token: user.token, body: { url: rx.url, events: ['link.created'] } })
    const statuses: number[] = []
    let retryAfter: string | null = null
    for (let i = 0; i < 100; i++) {
      const res = await call(srv.url, 'POST', `/api/v1/webhooks/${hook.body.id}/test`, { token: user.token })
      statuses.push(res.status)
      if (res.status === 429) retryAfter ??= res.headers.get('retry-after')
    }
    assert.ok(statuses.filter((s) => s === 429).length >= 50, `429 × ${statuses.filter((s) => s === 429).length}`)
    assert.ok(Number(retryAfter) >= 1)
    // A retry takes from the same allowance.
    const deliveries = await call(srv.url, 'GET', `/api/v1/webhooks/${hook.body.id}/deliveries`, { token: user.token })
    const retry = await call(srv.url, 'POST', `/api/v1/webhooks/${hook.body.id}/deliveries/${deliveries.body.deliveries[0].id}/retry`, { token: user.token })
    assert.is(retry.status, 429)
    const other = await newUser(srv.url)
    const otherHook = await call(srv.url, 'POST', '/api/v1/webhooks', { token: other.token, body: { url: rx.url, events: ['link.created'] } })
    assert.is((await call(srv.url, 'POST', `/api/v1/webhooks/${otherHook.body.id}/test`, { token: other.token })).status, 202)
  } finally {
    await rx.stop()
  }
})

test('while 4 endpoints of one account accept and never answer, another account\'s delivery arrives within 10 s', async ({ srv }) => {
  const stall = await stallingServer()
  const rx = await new Receiver().start()
  try {
    const stuck = await newUser(srv.url)
    for (let i = 0; i < 4; i++) {
      const hook = await call(srv.url, 'POST', '/api/v1/webhooks', { token: stuck.token, body: { url: `${stall.url}/hook/${i}`, events: ['link.created'] } })
      assert.is(hook.status, 201, hook.text)
    }
    // 40 deliveries to endpoints that hold every request until its 10 s time limit.
    for (let i = 0; i < 10; i++) await newLink(srv.url, stuck.token, `https://example.com/stuck/${i}`)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const other = await newUser(srv.url)
    await call(srv.url, 'POST', '/api/v1/webhooks', { token: other.token, body: { url: rx.url, events: ['link.created'] } })
    const started = Date.now()
    const link = await newLink(srv.url, other.token, 'https://example.com/waiting')
    await until(10_000, () => rx.of('link.created').some((r) => r.event.data.code === link.code))
    assert.ok(Date.now() - started < 10_000, `arrived after ${Date.now() - started} ms`)
  } finally {
    stall.close()
    await rx.stop()
  }
})

test.run()

const a = { webhook_id: 'a1', user_id: 'A' }
const a2 = { webhook_id: 'a2', user_id: 'A' }
const b = { webhook_id: 'b1', user_id: 'B' }

unit('fair shares: an account never holds the reserved slots; the account with fewest under way goes first', () => {
  const shares = new FairShares(8)
  assert.is(shares.perAccount, 6)
  const queue = [a, a2, a, a2, a, a2, a, a2, b]
  const order: string[] = []
  for (;;) {
    const i = shares.pick(queue, 0)
    if (i === -1) break
    order.push(queue[i]!.user_id)
    shares.started(queue.splice(i, 1)[0]!, 0)
  }
  assert.equal(order.filter((u) => u === 'A').length, 6)
  assert.equal(order.filter((u) => u === 'B').length, 1)
  assert.equal(order.slice(0, 2).sort(), ['A', 'B'], 'B does not wait behind A')
})

unit('fair shares: an endpoint whose delivery runs past SLOW_MS, or that stalled last time, gets one slot and is passed over by claims', () => {
  const shares = new FairShares(8)
  const t = shares.started(a, 0)
  assert.is(shares.pick([a], 10), 0, 'a second delivery to a working endpoint may start')
  assert.is(shares.pick([a], FairShares.SLOW_MS), -1, 'not to one whose delivery is under way for SLOW_MS')
  assert.equal(shares.skips(FairShares.SLOW_MS, []).webhooks, ['a1'])
  shares.ended(a, t, false, FairShares.SLOW_MS + 1)
  const again = shares.started(a, FairShares.SLOW_MS + 2)
  assert.is(shares.pick([a], FairShares.SLOW_MS + 3), -1, 'a stalled endpoint: one at a time')
  shares.ended(a, again, true, FairShares.SLOW_MS + 4)
  shares.started(a, FairShares.SLOW_MS + 5)
  assert.is(shares.pick([a], FairShares.SLOW_MS + 6), 0, 'it answered: no longer stalled')
})

unit.run()
