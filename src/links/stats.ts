// GET /api/v1/links/{code}/stats: a link's visits per UTC day (humans, bots, unique visitors,
// and the humans by device, browser, OS and country) and its referrer hosts, over a range of at
// most 400 days, with its experiment's variants and verdict; as JSON, or as CSV with one row per day.
import { sessionOf, type Ctx } from '../context.js'
import { linkNotFound } from '../http/errors.js'
import { Query } from '../http/query.js'
import { csv, wantsCsv, type Cell } from '../http/csv.js'
import { json, type Reply } from '../http/reply.js'
import type { Dimension } from '../stats/breakdowns.js'
import { codeParam } from './short-code.js'
import { firstRetainedDay } from '../stats/job.js'
import { readStats, type DimCount } from '../stats/queries.js'
import { dateOf } from '../stats/visits.js'
import { resultsOf, type Results } from '../experiments/queries.js'
import { judge } from '../experiments/significance.js'

/** What these routes may touch. */
type StatsCtx = Ctx<'sql' | 'reads' | 'config'>

export const MAX_STATS_DAYS = 400
const DEFAULT_DAYS = 30
const DAY_MS = 86_400_000
const DATE = /^\d{4}-\d{2}-\d{2}$/
const FIRST_DAY = 0 // 1970-01-01
const LAST_DAY = Math.floor(Date.UTC(9999, 11, 31) / DAY_MS)

const BREAKDOWNS = [
  ['devices', 'device'],
  ['browsers', 'browser'],
  ['os', 'os'],
  ['countries', 'country'],
] as const satisfies ReadonlyArray<readonly [string, Dimension]>
const FORMATS = ['json', 'csv'] as const

type Counts = Record<string, number>
interface Day {
  date: string
  visits: number
  humans: number
  bots: number
  uniques: number
  devices: Counts
  browsers: Counts
  os: Counts
  countries: Counts
}

export async function getStats(ctx: StatsCtx): Promise<Reply> {
  const session = sessionOf(ctx)
  // parameters before the look-up (contract §2)
  const q = new Query(ctx.req.url)
  const format = q.oneOf('format', FORMATS)
  const range = parseRange(q, Date.now())
  const code = codeParam(ctx)
  const [from, to] = [dateOf(range.from), dateOf(range.to)]
  // Counts may lag on a replica; a link it does not know yet is asked of the primary.
  // Days past retention read as zeros, also those a merged month still holds until its last day passes.
  const kept = firstRetainedDay(Date.now(), ctx.deps.config.statsRetentionDays)
  const readFrom = from < kept ? kept : from
  const stored = await ctx.deps.reads.read((sql) => readStats(sql, session.userId, code, readFrom, to), (found) => found === undefined)
  if (stored === undefined) throw linkNotFound()
  const byDay = new Map(stored.days.map((d) => [d.day, d]))
  const dimsByDay = new Map<string, DimCount[]>()
  for (const m of stored.dims) {
    const list = dimsByDay.get(m.day)
    if (list === undefined) dimsByDay.set(m.day, [m])
    else list.push(m)
  }
  const days: Day[] = []
  let humans = 0
  let bots = 0
  for (let n = range.from; n <= range.to; n++) {
    const date = dateOf(n)
    const d = byDay.get(date)
    const day: Day = { date, visits: 0, humans: 0, bots: 0, uniques: 0, devices: {}, browsers: {}, os: {}, countries: {} }
    if (d !== undefined) Object.assign(day, { visits: d.humans + d.bots, humans: d.humans, bots: d.bots, uniques: d.uniques })
    for (const m of dimsByDay.get(date) ?? []) day[KEY_OF[m.dim]][m.value] = m.visits
    humans += day.humans
    bots += day.bots
    days.push(day)
  }
  const totals = Object.fromEntries(BREAKDOWNS.map(([key]) => [key, total(days, key)])) as Record<BreakdownKey, Array<{ name: string; visits: number }>>
  const results = resultsOf(stored.experiment)
  const variants = variantsOf(results)
  if (wantsCsv(format, ctx.req.headers.accept)) return csv(statsCsv(days, totals, results), `${code}-${from}-${to}.csv`)
  // The verdict is over the whole experiment, whatever the range: a range picked to suit cannot make a winner.
  const experiment = judge(results?.totals ?? [])
  return json(200, { code, from, to, total: humans + bots, humans, bots, days, referrers: stored.referrers, ...totals, variants, experiment })
}

/** Each variant's counts over the range (sums of its days; uniques as each day counts them). */
function variantsOf(results: Results | undefined): Array<{ url: string; weight: number; visits: number; uniques: number; conversions: number }> {
  if (results === undefined) return []
  const sums = results.arms.map((a) => ({ url: a.url, weight: a.weight, visits: 0, uniques: 0, conversions: 0 }))
  for (const d of results.days) {
    const s = sums[d.variant]!
    s.visits += d.visits
    s.uniques += d.uniques
    s.conversions += d.conversions
  }
  return sums
}

type BreakdownKey = (typeof BREAKDOWNS)[number][0]
const KEY_OF = Object.fromEntries(BREAKDOWNS.map(([key, dim]) => [dim, key])) as Record<Dimension, BreakdownKey>

/** A breakdown's values over the range, the most visits first (ties by name). */
function total(days: readonly Day[], key: BreakdownKey): Array<{ name: string; visits: number }> {
  const sums = new Map<string, number>()
  for (const d of days) for (const [name, n] of Object.entries(d[key])) sums.set(name, (sums.get(name) ?? 0) + n)
  return [...sums].map(([name, visits]) => ({ name, visits })).sort((a, b) => b.visits - a.visits || (a.name < b.name ? -1 : 1))
}

/**
 * One row per day: the day's counts, a column per value of each breakdown (as "device:mobile"),
 * then, for an experiment, three per variant ("variant0:visits", "variant0:uniques", "variant0:conversions").
 */
function statsCsv(days: readonly Day[], totals: Record<BreakdownKey, Array<{ name: string }>>, results: Results | undefined): Cell[][] {
  const columns = BREAKDOWNS.flatMap(([key, dim]) => totals[key].map((t) => [key, dim, t.name] as const))
  const arms = results?.arms.map((_, i) => i) ?? []
  const byDay = new Map((results?.days ?? []).map((d) => [`${d.day} ${d.variant}`, d]))
  const variantCells = (date: string) => arms.flatMap((i) => {
    const d = byDay.get(`${date} ${i}`)
    return [d?.visits ?? 0, d?.uniques ?? 0, d?.conversions ?? 0]
  })
  const rows: Cell[][] = [['date', 'visits', 'humans', 'bots', 'uniques', ...columns.map(([, dim, name]) => `${dim}:${name}`), ...arms.flatMap((i) => VARIANT_COLUMNS.map((c) => `variant${i}:${c}`))]]
  for (const d of days) rows.push([d.date, d.visits, d.humans, d.bots, d.uniques, ...columns.map(([key, , name]) => d[key][name] ?? 0), ...variantCells(d.date)])
  return rows
}

const VARIANT_COLUMNS = ['visits', 'uniques', 'conversions'] as const

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
