// The ExperimentCounter's flushes (src/experiments/counter.ts) against a stand-in database that
// keeps what commits: the flush ids recorded in visit_flushes and each variant's visits. A flush
// whose COMMIT went through but whose answer was lost is tried again and must not count twice.
import { randomBytes } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Sql } from '../../src/db/types.js'
import { ExperimentCounter } from '../../src/experiments/counter.js'
import { createLogger } from '../../src/log.js'

type Outcome = 'ok' | 'fails before writing' | 'commits, then the connection drops'

/** A tagged-template stand-in for postgres.js: a transaction's writes are kept only if it commits. */
function fakeDatabase(outcomes: Outcome[]): { sql: Sql; visits: Map<string, number>; flushIds: Set<string> } {
  const flushIds = new Set<string>()
  const visits = new Map<string, number>()
  const tag = (() => Promise.resolve([])) as unknown as Sql
  ;(tag as unknown as { begin: unknown }).begin = async (fn: (tx: Sql) => Promise<unknown>) => {
    const outcome = outcomes.shift() ?? 'ok'
    if (outcome === 'fails before writing') throw Object.assign(new Error('connection lost'), { code: 'CONNECTION_CLOSED' })
    const ids = new Set<string>()
    const rows = new Map<string, number>()
    const tx = ((strings: TemplateStringsArray, ...params: unknown[]) => {
      const text = strings.join('?')
      if (text.includes('visit_flushes')) {
        const fresh = (params[0] as string[]).filter((id) => !flushIds.has(id))
        fresh.forEach((id) => ids.add(id))
        return Promise.resolve(fresh.map((id) => ({ id })))
      }
      if (text.includes('insert into experiment_days')) {
        const [codes, days, variants, counts] = params as [string[], string[], number[], number[]]
        codes.forEach((code, i) => rows.set(`${code} ${days[i]} ${variants[i]}`, (rows.get(`${code} ${days[i]} ${variants[i]}`) ?? 0) + counts[i]!))
      }
      return Promise.resolve([])
    }) as unknown as Sql
    await fn(tx)
    // COMMIT
    ids.forEach((id) => flushIds.add(id))
    for (const [key, n] of rows) visits.set(key, (visits.get(key) ?? 0) + n)
    if (outcome === 'commits, then the connection drops') throw Object.assign(new Error('connection lost'), { code: 'CONNECTION_CLOSED' })
    return undefined
  }
  return { sql: tag, visits, flushIds }
}

const quiet = createLogger('error', () => {})
const DAY = 20_600
const counterOn = (sql: Sql) => new ExperimentCounter(sql, quiet, randomBytes(32), { flushMs: 1_000, windowDays: 30, retentionDays: 400 }, () => {})
const visitor = (i: number) => randomBytes(32).fill(i, 0, 1)

test("a flush that committed but failed at its COMMIT is tried again under the same id: the variant's visits count once", async () => {
  const db = fakeDatabase(['commits, then the connection drops'])
  const counter = counterOn(db.sql)
  for (let i = 0; i < 3; i++) counter.record('AAAAAAAA', 1, DAY, visitor(i))
  await counter.flush()
  assert.is(db.visits.get('AAAAAAAA 2026-05-27 1'), 3)
  counter.record('AAAAAAAA', 1, DAY, visitor(9))
  await counter.flush() // the retried batch's id is known: only the new visit is added
  assert.is(db.visits.get('AAAAAAAA 2026-05-27 1'), 4)
  assert.is(db.flushIds.size, 2)
  await counter.flush() // nothing left to retry
  assert.is(db.visits.get('AAAAAAAA 2026-05-27 1'), 4)
})

test('a flush that surely failed keeps its counts for the next one, which writes them once', async () => {
  const db = fakeDatabase(['fails before writing'])
  const counter = counterOn(db.sql)
  counter.record('AAAAAAAA', 0, DAY, visitor(1))
  counter.record('AAAAAAAA', 0, DAY, visitor(2))
  await counter.flush()
  assert.is(db.visits.size, 0)
  counter.record('AAAAAAAA', 0, DAY, visitor(3))
  await counter.flush()
  assert.is(db.visits.get('AAAAAAAA 2026-05-27 0'), 3)
  await counter.flush()
  assert.is(db.visits.get('AAAAAAAA 2026-05-27 0'), 3)
})

test.run()
