// GET /api/v1/links/{code}/stats: a link's visits per UTC day (humans, bots, unique
// visitors) and its referrer hosts, over a range of at most 400 days.
import { sessionOf, type Ctx } from '../context.js'
import { linkNotFound } from '../http/errors.js'
import { Query } from '../http/query.js'
import { json, type Reply } from '../http/reply.js'
import { findLink } from './queries.js'
import { codeParam } from './short-code.js'
import { readStats } from './stats-queries.js'
import { dateOf } from './visits.js'

/** What these routes may touch. */
type StatsCtx = Ctx<'sql'>

export const MAX_STATS_DAYS = 400
const DEFAULT_DAYS = 30
const DAY_MS = 86_400_000
const DATE = /^\d{4}-\d{2}-\d{2}$/
const FIRST_DAY = 0 // 1970-01-01
const LAST_DAY = Math.floor(Date.UTC(9999, 11, 31) / DAY_MS)

export async function getStats(ctx: StatsCtx): Promise<Reply> {
  const session = sessionOf(ctx)
  const range = parseRange(new Query(ctx.req.url), Date.now()) // parameters before the look-up (contract §2)
  const code = codeParam(ctx)
  const { sql } = ctx.deps
  if ((await findLink(sql, session.userId, code)) === undefined) throw linkNotFound()
  const [from, to] = [dateOf(range.from), dateOf(range.to)]
  const stored = await readStats(sql, code, from, to)
  const byDay = new Map(stored.days.map((d) => [d.day, d]))
  const days = []
  let humans = 0
  let bots = 0
  for (let n = range.from; n <= range.to; n++) {
    const date = dateOf(n)
    const d = byDay.get(date)
    const day = { date, visits: 0, humans: 0, bots: 0, uniques: 0 }
    if (d !== undefined) Object.assign(day, { visits: d.humans + d.bots, humans: d.humans, bots: d.bots, uniques: d.uniques })
    humans += day.humans
    bots += day.bots
    days.push(day)
  }
  return json(200, { code, from, to, total: humans + bots, humans, bots, days, referrers: stored.referrers })
}

/**
 * from and to (inclusive, "YYYY-MM-DD", UTC days) as day numbers. Defaults: to is today, from is
 * 29 days before to. At most MAX_STATS_DAYS days; errors are 422 INVALID_QUERY.
 */
export function parseRange(q: Query, nowMs: number): { from: number; to: number } {
  const from = day(q, 'from')
  const to = day(q, 'to')
  q.check()
  const end = to ?? Math.floor(nowMs / DAY_MS)
  const start = from ?? end - (DEFAULT_DAYS - 1)
  if (start > end) q.fail('from', 'INVALID', 'must not be after to')
  else if (end - start + 1 > MAX_STATS_DAYS) q.fail('from', 'INVALID', `must be at most ${MAX_STATS_DAYS} days before to (both included)`)
  q.check()
  return { from: Math.max(start, FIRST_DAY), to: end }
}

/** A calendar date "YYYY-MM-DD" from 1970-01-01 to 9999-12-31, as a day number. */
function day(q: Query, name: string): number | undefined {
  const raw = q.string(name)
  if (raw === undefined) return undefined
  const ms = DATE.test(raw) ? Date.parse(`${raw}T00:00:00Z`) : NaN
  // Date.parse rolls 2026-02-30 over to March: only a date that reads back the same is one.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== raw) return q.fail(name, 'INVALID', 'must be a date as YYYY-MM-DD')
  const n = ms / DAY_MS
  if (n < FIRST_DAY || n > LAST_DAY) return q.fail(name, 'INVALID', 'must be from 1970-01-01 to 9999-12-31')
  return n
}
