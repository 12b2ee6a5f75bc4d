// The redirect path's cache misses are read in batches: one statement per event-loop turn, not
// one per request (a flood of codes costs the database little).
import * as assert from 'uvu/assert'
import { LocationLoader } from '../../src/links/location-loader.js'
import { newLink, newUser } from '../helpers/api.js'
import { serverSuite } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

const test = serverSuite('LocationLoader')

function counting<T extends (...args: never[]) => unknown>(sql: T): { sql: T; count: () => number } {
  let n = 0
  const wrapped = ((...args: Parameters<T>) => {
    n++
    return sql(...args)
  }) as unknown as T
  return { sql: wrapped, count: () => n }
}

test('misses of one event-loop turn are one query; each caller gets its own answer', async ({ srv }) => {
  const user = await newUser(srv.url)
  const a = await newLink(srv.url, user.token, 'https://a.example/')
  const b = await newLink(srv.url, user.token, 'https://b.example/ä')
  const c = counting(srv.service.db.sql)
  const loader = new LocationLoader(c.sql)
  const results = await Promise.all([a.code, b.code, 'Unkn0wnX', a.code].map((code) => loader.load(code)))
  const a1 = { location: 'https://a.example/', expiresAt: Infinity, startsAt: 0, capped: false, locked: false, card: undefined, rules: undefined, experiment: undefined, exhausted: false, disabled: false }
  assert.equal(results, [a1, { location: 'https://b.example/%C3%A4', expiresAt: Infinity, startsAt: 0, capped: false, locked: false, card: undefined, rules: undefined, experiment: undefined, exhausted: false, disabled: false }, undefined, a1])
  assert.is(c.count(), 1)
  assert.equal(await loader.load(b.code), { location: 'https://b.example/%C3%A4', expiresAt: Infinity, startsAt: 0, capped: false, locked: false, card: undefined, rules: undefined, experiment: undefined, exhausted: false, disabled: false })
  assert.is(c.count(), 2, 'a later turn is a new query')
})

test('an expiring link comes with its expiry, to the millisecond', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  await srv.service.db.sql`update links set expires_at = '2031-02-03T04:05:06.789Z' where code = ${link.code}`
  assert.equal(await new LocationLoader(srv.service.db.sql).load(link.code), {
    location: 'https://example.com/',
    expiresAt: Date.parse('2031-02-03T04:05:06.789Z'),
    startsAt: 0,
    capped: false,
    locked: false,
    card: undefined,
    rules: undefined,
    experiment: undefined,
    exhausted: false,
    disabled: false,
  })
})

test('a deleted link is not found', async ({ srv }) => {
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  await srv.service.db.sql`update links set user_id = null, url = null, location = null, deleted_at = now() where code = ${link.code}`
  assert.is(await new LocationLoader(srv.service.db.sql).load(link.code), undefined)
})

test('an answer that cannot be read rejects its callers; nothing escapes to end the process', async () => {
  // A result with a hole where a row should be (the driver once gave them: docs/reliability.md).
  const holed = (() => Promise.resolve(Object.assign([], { length: 1 }))) as unknown as ConstructorParameters<typeof LocationLoader>[0]
  const escaped: unknown[] = []
  const record = (err: unknown) => escaped.push(err)
  process.on('unhandledRejection', record)
  try {
    let outcome: unknown
    void new LocationLoader(holed).load('Abcdefgh').then(() => (outcome = 'resolved'), (e: unknown) => (outcome = e))
    await until(2_000, () => outcome !== undefined, { why: () => 'its callers were never settled' })
    assert.instance(outcome, TypeError)
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(escaped, [])
  } finally {
    process.off('unhandledRejection', record)
  }
})

test('a batch reaching 500 codes is sent at once, without waiting for the turn to end', async ({ srv }) => {
  const c = counting(srv.service.db.sql)
  const loader = new LocationLoader(c.sql)
  const codes = Array.from({ length: 501 }, (_, i) => `Zz${String(i).padStart(6, '0')}`)
  const all = Promise.all(codes.map((code) => loader.load(code)))
  assert.is(c.count(), 1, 'the first 500 went synchronously')
  assert.ok((await all).every((l) => l === undefined))
  assert.is(c.count(), 2)
})

test('a failed query rejects every caller of its batch', async () => {
  const failing = (() => Promise.reject(Object.assign(new Error('gone'), { code: 'CONNECTION_CLOSED' }))) as never
  const loader = new LocationLoader(failing)
  const results = await Promise.allSettled([loader.load('AAAAAAAA'), loader.load('BBBBBBBB')])
  assert.equal(results.map((r) => r.status), ['rejected', 'rejected'])
})

test('a read that meets a killed connection is sent once more; a refusal is not', async ({ srv }) => {
  const user = await newUser(srv.url)
  const a = await newLink(srv.url, user.token, 'https://a.example/')
  const failing = (code: string, times: number) => {
    let left = times
    let calls = 0
    const sql = ((...args: unknown[]) => {
      calls++
      if (left-- > 0) return Promise.reject(Object.assign(new Error('gone'), { code }))
      return (srv.service.db.sql as unknown as (...a: unknown[]) => unknown)(...args)
    }) as unknown as typeof srv.service.db.sql
    return { sql, calls: () => calls }
  }
  const killed = failing('CONNECTION_CLOSED', 1)
  assert.equal(await new LocationLoader(killed.sql).load(a.code), { location: 'https://a.example/', expiresAt: Infinity, startsAt: 0, capped: false, locked: false, card: undefined, rules: undefined, experiment: undefined, exhausted: false, disabled: false })
  assert.is(killed.calls(), 2)
  const twice = failing('57P01', 2)
  assert.is(await new LocationLoader(twice.sql).load(a.code).then(() => 'read', (err: { code: string }) => err.code), '57P01', 'once more only')
  assert.is(twice.calls(), 2)
  const refused = failing('ECONNREFUSED', 1)
  assert.is(await new LocationLoader(refused.sql).load(a.code).then(() => 'read', (err: { code: string }) => err.code), 'ECONNREFUSED')
  assert.is(refused.calls(), 1, 'a database that refuses is not asked again at once')
})

test.run()
