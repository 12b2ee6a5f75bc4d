// Unit tests of one destination check (src/link-checks/client.ts) against local servers, with the
// hosts' turns and the block list in memory: a server that never answers, HEAD refused, a 429,
// too many redirects, a blocked hop, and a name that resolves only to a private address.
import * as assert from 'uvu/assert'
import { suite } from 'uvu'
import { BACKOFF_S, checkTarget, type Hosts } from '../../src/link-checks/client.js'
import { Target } from '../helpers/target.js'

const test = suite<{ target: Target }>('link check client')
test.before(async (ctx) => {
  ctx.target = await new Target().start()
})
test.after(async (ctx) => {
  await ctx.target.stop()
})

/** The block list and the hosts' turns, in memory; records what was asked. */
function memoryHosts(blocked: string[] = []) {
  const log = { turns: 0, freed: 0, backoffs: [] as Array<number | undefined> }
  const hosts: Hosts = {
    blocked: async (host) => blocked.includes(host),
    take: async () => {
      log.turns++
      return async () => void log.freed++
    },
    backoff: async (_host, seconds) => {
      log.backoffs.push(seconds)
      return seconds ?? 300
    },
  }
  return { hosts, log }
}

const open = { allowPrivate: true, userAgent: 'test-agent' }

test('a server that never answers is unreachable once the time limit passes, and its host turn is given back', async ({ target }) => {
  target.answer('/never', 'never')
  const { hosts, log } = memoryHosts()
  const started = Date.now()
  const f = await checkTarget(target.url('/never'), hosts, { ...open, timeoutMs: 300 })
  assert.equal([f.result, f.httpStatus, f.detail], ['unreachable', null, 'no answer within 0.3 s'])
  assert.ok(Date.now() - started < 2_000)
  assert.equal([log.turns, log.freed], [1, 1])
})

test('HEAD refused with 405 is asked again with GET; the answer decides', async ({ target }) => {
  target.answer('/nohead', { status: 405 })
  const before = target.requests.length
  const f = await checkTarget(target.url('/nohead'), memoryHosts().hosts, open)
  assert.equal(target.requests.slice(before).map((r) => r.method), ['HEAD', 'GET'])
  assert.equal([f.result, f.httpStatus], ['broken', 405])
})

test('a 429 backs its host off for Retry-After and defers the check (not a failure)', async ({ target }) => {
  target.answer('/busy', { status: 429, headers: { 'retry-after': '120' } })
  const { hosts, log } = memoryHosts()
  const f = await checkTarget(target.url('/busy'), hosts, open)
  assert.equal([f.result, f.retryS], ['deferred', 120])
  assert.equal(log.backoffs, [120])
})

test('a redirect chain is followed to its end; more than 5 redirects is broken', async ({ target }) => {
  for (let i = 0; i < 7; i++) target.answer(`/chain${i}`, { status: 302, location: `/chain${i + 1}` })
  target.answer('/chain3', { status: 301, location: '/end' })
  const ok = await checkTarget(target.url('/chain0'), memoryHosts().hosts, open)
  assert.equal([ok.result, ok.httpStatus, ok.finalUrl], ['ok', 200, target.url('/end')])
  target.answer('/chain3', { status: 302, location: '/chain4' })
  const long = await checkTarget(target.url('/chain0'), memoryHosts().hosts, open)
  assert.equal([long.result, long.detail], ['broken', 'more than 5 redirects'])
})

test('a hop on the block list is flagged without being asked', async ({ target }) => {
  target.answer('/to-bad', { status: 302, location: 'https://bad.example/x' })
  const { hosts, log } = memoryHosts(['bad.example'])
  const f = await checkTarget(target.url('/to-bad'), hosts, open)
  assert.equal([f.result, f.finalUrl], ['flagged', 'https://bad.example/x'])
  assert.is(log.turns, 1, 'only the first hop was asked')
})

test('a destination on the block list is left to the block list (which stops and restores the link): not asked, not flagged, checked again later', async ({ target }) => {
  const before = target.requests.length
  const { hosts } = memoryHosts(['bad.example'])
  const f = await checkTarget('https://bad.example/x', hosts, open)
  assert.equal([f.result, f.retryS], ['deferred', BACKOFF_S])
  assert.is(target.requests.length, before)
})

test('without LINK_CHECK_ALLOW_PRIVATE, a name that resolves to loopback and a private literal are unreachable, never asked', async ({ target }) => {
  const before = target.requests.length
  const byName = await checkTarget(`http://localhost:${target.port}/`, memoryHosts().hosts, { ...open, allowPrivate: false })
  assert.equal([byName.result, byName.detail], ['unreachable', 'the name does not resolve to an address that is checked'])
  const literal = await checkTarget(target.url('/'), memoryHosts().hosts, { ...open, allowPrivate: false })
  assert.is(literal.result, 'unreachable')
  assert.is(target.requests.length, before)
})

test.run()
