// Unit tests of what webhooks send and where: the signature (against the standardwebhooks
// package), the forbidden addresses, the field rules, the retry schedule's configuration, and the
// outgoing request's limits (no redirect, 1 KiB, the address connected to).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { ConfigError, loadConfig } from '../../src/config.js'
import { HttpError } from '../../src/http/errors.js'
import { isForbiddenAddress } from '../../src/webhooks/address.js'
import { postWebhook } from '../../src/webhooks/send.js'
import { newSecret, sign } from '../../src/webhooks/signature.js'
import { parseWebhook } from '../../src/webhooks/validate.js'

const test = suite('webhook requests')

test('a signature made here verifies with the standardwebhooks package; a secret is whsec_ and 32 random bytes', () => {
  const secret = newSecret()
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  assert.is.not(newSecret(), secret)
  const body = '{"type":"link.created","timestamp":"2026-01-01T00:00:00.000Z","data":{"code":"abcdEFGH"}}'
  const ts = Math.floor(Date.now() / 1000)
  const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(ts), 'webhook-signature': sign(secret, 'msg_1', ts, body) }
  assert.equal(new Webhook(secret).verify(body, headers), JSON.parse(body))
  assert.throws(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'msg_2' }))
})

test('loopback, private, shared, link-local, unspecified, multicast and mapped forms are forbidden; public ones are not', () => {
  for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', '169.254.169.254', '0.0.0.0', '224.0.0.1',
    '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a00:1', 'localhost']) {
    assert.ok(isForbiddenAddress(a), a)
  }
  for (const a of ['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) assert.not.ok(isForbiddenAddress(a), a)
})

const fieldsOf = (fn: () => unknown): string[] => {
  try {
    fn()
  } catch (err) {
    if (err instanceof HttpError) return (err.errors ?? []).map((e) => `${e.field} ${e.code}`)
    throw err
  }
  return []
}

test('a webhook url is https, and not a forbidden literal address, unless the configuration allows it', () => {
  const strict = { allowHttp: false, allowPrivate: false }
  assert.equal(fieldsOf(() => parseWebhook({ url: 'http://hooks.example/', events: ['link.created'] }, strict, true)), ['url INVALID'])
  assert.equal(fieldsOf(() => parseWebhook({ url: 'https://127.0.0.1/', events: ['link.created'] }, strict, true)), ['url INVALID'])
  assert.equal(fieldsOf(() => parseWebhook({ url: 'https://[::1]:8443/', events: ['link.created'] }, strict, true)), ['url INVALID'])
  // IPv4 inside IPv6, in every form (address.ts): compatible, translated, 6to4, Teredo, NAT64 (local-use too)
  for (const literal of ['[::7f00:1]', '[::ffff:0:7f00:1]', '[2002:7f00:1::1]', '[2001:0:7f00:1::]', '[64:ff9b:1::7f00:1]', '[64:ff9b::a9fe:a9fe]']) {
    assert.equal(fieldsOf(() => parseWebhook({ url: `https://${literal}/`, events: ['link.created'] }, strict, true)), ['url INVALID'], literal)
  }
  assert.equal(fieldsOf(() => parseWebhook({ url: 'http://127.0.0.1/', events: ['link.created'] }, { allowHttp: true, allowPrivate: true }, true)), [])
  assert.equal(fieldsOf(() => parseWebhook({ url: 'https://hooks.example/', events: ['link.visited'] }, strict, true)), ['events INVALID'])
  assert.equal(fieldsOf(() => parseWebhook({}, strict, true)), ['url REQUIRED', 'events REQUIRED'])
  assert.equal(fieldsOf(() => parseWebhook({ enabled: 1 }, strict, false)), ['enabled TYPE'])
  assert.equal(parseWebhook({ events: ['link.clicked', 'link.clicked'] }, strict, false), { events: ['link.clicked'] })
})

test('WEBHOOK_RETRY_SCHEDULE: seconds, comma-separated; the default is about 5 s to 10 h', () => {
  assert.equal(loadConfig({}).webhooks.retrySeconds, [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000])
  assert.equal(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1, 2,4' }).webhooks.retrySeconds, [1, 2, 4])
  for (const bad of ['0', '1,,2', 'a', '1.5', '90000']) assert.throws(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: bad }), (err: unknown) => err instanceof ConfigError)
  assert.is(loadConfig({}).webhooks.allowHttp, false)
  assert.is(loadConfig({}).webhooks.allowPrivate, false)
  assert.is(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'on' }).webhooks.allowPrivate, true)
})

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => unknown): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0
  const server = createServer((req, res) => {
    hits++
    handler(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  return { server, port: (server.address() as AddressInfo).port, hits: () => hits }
}

test('a name that resolves to a forbidden address is not connected to; nor is a literal one', async () => {
  const s = await serve((_req, res) => res.end())
  try {
    const byName = await postWebhook(new URL(`http://localhost:${s.port}/`), {}, '{}', false)
    assert.match(byName.error!, /forbidden address/)
    const literal = await postWebhook(new URL(`http://127.0.0.1:${s.port}/`), {}, '{}', false)
    assert.match(literal.error!, /forbidden address/)
    assert.is(s.hits(), 0)
    const allowed = await postWebhook(new URL(`http://localhost:${s.port}/`), {}, '{}', true)
    assert.equal([allowed.status, allowed.error], [200, undefined])
    // A name that does not resolve fails with the same words: a delivery's error tells no one which internal names exist.
    const unknown = await postWebhook(new URL(`http://no-such-host.invalid:${s.port}/`), {}, '{}', false)
    assert.is(unknown.error, byName.error)
  } finally {
    s.server.close()
  }
})

test('a redirect is not followed but failed; an endless answer is cut after 1 KiB', async () => {
  const s = await serve((req, res) => {
    if (req.url === '/moved') return res.writeHead(307, { location: '/elsewhere' }).end()
    res.writeHead(200)
    const more = (): unknown => !res.destroyed && res.write(Buffer.alloc(16 * 1024, 'x'), (err) => err === undefined || err === null ? setTimeout(more, 5) : undefined)
    more()
  })
  try {
    const moved = await postWebhook(new URL(`http://127.0.0.1:${s.port}/moved`), {}, '{}', true)
    assert.equal([moved.status, moved.error], [307, 'answered 307'])
    assert.is(s.hits(), 1)
    const endless = await postWebhook(new URL(`http://127.0.0.1:${s.port}/`), {}, '{}', true)
    assert.equal([endless.status, endless.error], [200, undefined])
    assert.ok(endless.durationMs < 2_000)
  } finally {
    s.server.closeAllConnections()
    s.server.close()
  }
})

test.run()
