// SQL of the visit statistics: a flush's batched write, the day's visitor salt, the daily job
// (drop finished days' salts, the partitions of days past retention and old flush ids; create
// the coming days' partitions; merge a finished month; delete deleted links' rows) and the owner's read.
import { randomBytes } from 'node:crypto'
import { isConflictVictim } from '../db/retry.js'
import type { Sql, Tx } from '../db/types.js'
import { queueClicks, type Clicks } from './clicks.js'
import type { Dimension } from './breakdowns.js'
import { DIRECT, OTHER } from './referrer.js'
import { applyRegisters, emptySketch, estimate } from './sketch.js'

/** Referrer hosts kept per link and day; the rest count as "other". */
export const MAX_REFERRER_HOSTS = 20
const STATS_JOB_LOCK = 7_245_010 // arbitrary, fixed: one node at a time runs the daily job

/** One flush: every array in code order (then day), so nodes lock rows in the same order. */
export interface VisitBatch {
  links: { codes: string[]; counts: number[]; lastAt: string[] }
  days: { codes: string[]; days: string[]; humans: number[]; bots: number[] }
  referrers: { codes: string[]; days: string[]; hosts: string[]; visits: number[] }
  /** the day's human visitors as sketch registers (sketch.ts registerOf), applied to the stored sketches */
  sketches: { codes: string[]; days: string[]; registers: Uint16Array[] }
  /** human visits by device, browser, OS and country (breakdowns.ts) */
  dims: { codes: string[]; days: string[]; dims: string[]; values: string[]; visits: number[] }
}

/**
 * Writes a flush in one transaction, once. `ids` name the batches it carries; each is recorded in
 * visit_flushes in the same transaction, and `chunksFor` gets those recorded now (a batch whose id
 * is already there was written by an earlier attempt whose outcome we did not hear) and gives the
 * rows a chunk of links at a time: each chunk is built while the one before is written, so the
 * event loop turns between them however many links a flush carries. `committing` is called once
 * every statement is done: from then on a failure may have come after the COMMIT.
 */
/**
 * The longest a flush may take: far above any flush measured (at 10M links the largest take
 * seconds), far below a connection that never answers. The database ends a flush's statement
 * that runs past it (and its connections end a transaction left idle past DB_TIMEOUT_MS), and
 * the service stops waiting for it then too (visits.ts).
 */
export const FLUSH_LIMIT_MS = 60_000

export function writeVisitFlush(sql: Sql, ids: string[], chunksFor: (fresh: ReadonlySet<string>) => AsyncIterable<VisitBatch>, committing: () => void): Promise<void> {
  return sql.begin(async (tx) => {
    await tx`select set_config('statement_timeout', ${`${FLUSH_LIMIT_MS}ms`}, true)`
    const recorded = await tx<{ id: string }[]>`
      insert into visit_flushes (id) select unnest(${ids}::uuid[]) on conflict do nothing returning id::text as id`
    for await (const rows of chunksFor(new Set(recorded.map((r) => r.id)))) await writeVisitBatch(tx, rows)
    committing()
  })
}

/** link.clicked per link of the flush: the count and, with statistics on, humans, bots and referrer hosts. */
export function clicksOf(b: VisitBatch): Clicks {
  const split = new Map<string, { humans: number; bots: number; referrers: Record<string, number> }>()
  const of = (code: string) => {
    let s = split.get(code)
    if (s === undefined) split.set(code, (s = { humans: 0, bots: 0, referrers: {} }))
    return s
  }
  b.days.codes.forEach((code, i) => {
    const s = of(code)
    s.humans += b.days.humans[i]!
    s.bots += b.days.bots[i]!
  })
  b.referrers.codes.forEach((code, i) => {
    const r = of(code).referrers
    const host = b.referrers.hosts[i]!
    r[host] = (r[host] ?? 0) + b.referrers.visits[i]!
  })
  return {
    codes: b.links.codes,
    counts: b.links.counts,
    humans: b.links.codes.map((c) => split.get(c)?.humans ?? null),
    bots: b.links.codes.map((c) => split.get(c)?.bots ?? null),
    referrers: b.links.codes.map((c) => JSON.stringify(split.get(c)?.referrers ?? {})),
  }
}


/**
 * A batch's rows. Only live links count: a code deleted before the flush leaves no row. The day
 * rows are upserted first: their row locks put concurrent flushes of the same link and day in
 * order, so the 20-host cap holds across nodes.
 */
async function writeVisitBatch(tx: Tx, b: VisitBatch): Promise<void> {
  const l = b.links
  if (l.codes.length === 0) return
  await tx`
    update links set visits = links.visits + v.n,
      last_visited_at = greatest(links.last_visited_at, v.at)
    from unnest(${l.codes}::text[], ${l.counts}::int[], ${l.lastAt}::timestamptz[]) as v(code, n, at)
    where links.code = v.code and links.deleted_at is null`
  // link.clicked commits with the counts it reports, or not at all (a flush written once, once).
  await queueClicks(tx, clicksOf(b))
  const d = b.days
  if (d.codes.length === 0) return
  await tx`
    insert into visit_days (code, day, humans, bots)
    select v.code, v.day, v.humans, v.bots
    from unnest(${d.codes}::text[], ${d.days}::date[], ${d.humans}::int[], ${d.bots}::int[]) as v(code, day, humans, bots)
    join links on links.code = v.code and links.deleted_at is null
    order by v.code, v.day
    on conflict (code, day) do update
    set humans = visit_days.humans + excluded.humans, bots = visit_days.bots + excluded.bots`
  const r = b.referrers
  const known = await tx<{ code: string; day: string; host: string }[]>`
    select r.code, r.day::text as day, r.host from visit_referrers r
    join unnest(${d.codes}::text[], ${d.days}::date[]) as v(code, day) on r.code = v.code and r.day = v.day`
  const capped = capReferrers(known, r, MAX_REFERRER_HOSTS)
  await tx`
    insert into visit_referrers (code, day, host, visits)
    select v.code, v.day, v.host, v.n
    from unnest(${capped.codes}::text[], ${capped.days}::date[], ${capped.hosts}::text[], ${capped.visits}::int[])
      as v(code, day, host, n)
    join links on links.code = v.code and links.deleted_at is null
    order by v.code, v.day, v.host
    on conflict (code, day, host) do update set visits = visit_referrers.visits + excluded.visits`
  await writeDims(tx, b.dims)
  const k = b.sketches
  if (k.codes.length === 0) return
  // Read, merge, write back under the row locks the day upsert above took: concurrent flushes
  // of a link and day merge in turn. Only sketches that changed are written (no WAL otherwise).
  const stored = await tx<{ code: string; day: string; sketch: Buffer | null }[]>`
    select d.code, d.day::text as day, d.sketch from visit_days d
    join unnest(${k.codes}::text[], ${k.days}::date[]) as v(code, day) on d.code = v.code and d.day = v.day`
  const byKey = new Map(stored.map((r) => [`${r.code} ${r.day}`, r.sketch]))
  const changed = { codes: [] as string[], days: [] as string[], sketches: [] as string[] }
  for (let i = 0; i < k.codes.length; i++) {
    const key = `${k.codes[i]} ${k.days[i]}`
    if (!byKey.has(key)) continue // a deleted link
    const into = new Uint8Array(byKey.get(key) ?? emptySketch())
    if (!applyRegisters(into, k.registers[i]!)) continue
    changed.codes.push(k.codes[i]!)
    changed.days.push(k.days[i]!)
    changed.sketches.push(Buffer.from(into).toString('hex'))
  }
  if (changed.codes.length === 0) return
  await tx`
    update visit_days d set sketch = decode(v.sketch, 'hex')
    from unnest(${changed.codes}::text[], ${changed.days}::date[], ${changed.sketches}::text[]) as v(code, day, sketch)
    where d.code = v.code and d.day = v.day`
}

/** The breakdowns of a batch, in its transaction; in code, day order like the rows before them. */
async function writeDims(tx: Tx, m: VisitBatch['dims']): Promise<void> {
  if (m.codes.length === 0) return
  await tx`
    insert into visit_dims (code, day, dim, value, visits)
    select v.code, v.day, v.dim, v.value, v.n
    from unnest(${m.codes}::text[], ${m.days}::date[], ${m.dims}::text[], ${m.values}::text[], ${m.visits}::int[])
      as v(code, day, dim, value, n)
    join links on links.code = v.code and links.deleted_at is null
    order by v.code, v.day, v.dim, v.value
    on conflict (code, day, dim, value) do update set visits = visit_dims.visits + excluded.visits`
}

/**
 * Applies the cap: a host already stored for the link and day, "direct" and "other" keep their
 * own row; new hosts take the free places, the busiest first; the rest go to "other".
 */
export function capReferrers(
  known: ReadonlyArray<{ code: string; day: string; host: string }>,
  incoming: VisitBatch['referrers'],
  max: number,
): VisitBatch['referrers'] {
  const stored = new Map<string, Set<string>>()
  for (const k of known) {
    const key = `${k.code} ${k.day}`
    let hosts = stored.get(key)
    if (hosts === undefined) stored.set(key, (hosts = new Set()))
    hosts.add(k.host)
  }
  const order = incoming.codes.map((_, i) => i)
  order.sort((a, b) => incoming.visits[b]! - incoming.visits[a]! || (incoming.hosts[a]! < incoming.hosts[b]! ? -1 : 1))
  const out = new Map<string, number>() // "code day host" → visits
  for (const i of order) {
    const [code, day, host, n] = [incoming.codes[i]!, incoming.days[i]!, incoming.hosts[i]!, incoming.visits[i]!]
    const key = `${code} ${day}`
    let hosts = stored.get(key)
    if (hosts === undefined) stored.set(key, (hosts = new Set()))
    let target = host
    if (host !== DIRECT && host !== OTHER && !hosts.has(host)) {
      const named = [...hosts].filter((h) => h !== DIRECT && h !== OTHER).length
      if (named < max) hosts.add(host)
      else target = OTHER
    }
    const outKey = `${key} ${target}`
    out.set(outKey, (out.get(outKey) ?? 0) + n)
  }
  const result: VisitBatch['referrers'] = { codes: [], days: [], hosts: [], visits: [] }
  for (const [key, n] of [...out].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const [code, day, host] = key.split(' ') as [string, string, string]
    result.codes.push(code)
    result.days.push(day)
    result.hosts.push(host)
    result.visits.push(n)
  }
  return result
}

/**
 * The salt of a UTC day ("YYYY-MM-DD"), made by whichever node needs it first. "Do update" (to
 * itself) rather than "do nothing": a node that meets another's insert in flight waits for it and
 * gets its row back, where a separate select would not yet see it.
 */
export async function daySalt(sql: Sql, day: string): Promise<Buffer> {
  const [row] = await sql<{ salt: Buffer }[]>`
    insert into visit_salts (day, salt) values (${day}::date, ${randomBytes(32)})
    on conflict (day) do update set salt = visit_salts.salt
    returning salt`
  return row!.salt
}

/** How a run of the daily job ended: done (the partitions of visit_days it dropped), another node
 *  was running it, or it yielded: it could not have its table locks at once (users held them). */
export type StatsJobOutcome = { dropped: number } | 'elsewhere' | 'yielded'

/** Queued codes whose statistics one purge transaction deletes (visit_stats_purge). */
export const PURGE_BATCH = 200
/** Purge transactions a run of the job does at most: the rest waits for the next run. */
const PURGE_BATCHES = 50

/** One step of the job in a transaction of its own, under the job's advisory lock ('elsewhere'
 *  when another node holds it). */
function jobStep<T>(sql: Sql, step: (tx: Tx) => Promise<T>, isolation?: string): Promise<T | 'elsewhere'> {
  const body = async (tx: Tx): Promise<T | 'elsewhere'> => {
    const [lock] = await tx<{ locked: boolean }[]>`select pg_try_advisory_xact_lock(${STATS_JOB_LOCK}) as locked`
    if (!lock!.locked) return 'elsewhere'
    return step(tx)
  }
  return (isolation === undefined ? sql.begin(body) : sql.begin(isolation, body)) as Promise<T | 'elsewhere'>
}

/**
 * The daily job: days before `reduceBefore` lose their salt (no flush adds to them any more); the
 * statistics' partitions of days before `keepFrom` are detached and dropped, and those of the days
 * from `createFrom` to `aheadTo` created, as are those of days a row landed on without one; merged
 * months past retention are dropped; flush ids older than two days are deleted. That step takes
 * its table locks first, in one order, with a short lock_timeout, and yields to users when it
 * cannot have them (visit_stats_maintain): nothing is done then, and the caller runs it again later.
 * Then, each in transactions of their own that users do not wait on for long: a copy of a month
 * made earlier is swapped in (visit_stats_merge_swap), deleted links' statistics are deleted
 * (visit_stats_purge), and the oldest whole month within retention that ended before `createFrom`
 * is copied into one table (visit_stats_merge_copy, under the locks of a read) and swapped in as
 * its partition. One node at a time (the others skip it).
 */
export async function maintainStats(sql: Sql, reduceBefore: string, keepFrom: string, createFrom: string, aheadTo: string): Promise<StatsJobOutcome> {
  const kept = await jobStep(sql, async (tx) => {
    const [row] = await tx<{ dropped: number | null }[]>`
      select visit_stats_maintain(${keepFrom}::date, ${createFrom}::date, ${aheadTo}::date) as dropped`
    if (row!.dropped === null) return 'yielded' as const
    await tx`delete from visit_salts where day < ${reduceBefore}::date`
    await tx`delete from visit_flushes where at < now() - interval '2 days'`
    return { dropped: row!.dropped }
  })
  if (typeof kept !== 'object') return kept
  // A copy made by an earlier run goes in first: the purge below would change its month's rows.
  const swapped = await swapMonth(sql)
  if (swapped !== 'none' && swapped !== 'swapped' && swapped !== 'redo') return swapped
  const purged = await purgeOrphans(sql)
  if (purged !== undefined) return purged
  if (swapped === 'none') {
    let copied: string | null | 'elsewhere'
    try {
      copied = await jobStep(sql, async (tx) => (await tx<{ month: string | null }[]>`select visit_stats_merge_copy()::text as month`)[0]!.month, 'isolation level repeatable read')
    } catch (err) {
      // A change to the month committed while it was copied: the copy is gone with its transaction.
      if (isConflictVictim(err) || (err as { code?: unknown } | null)?.code === '55P03') return 'yielded'
      throw err
    }
    if (copied === 'elsewhere') return copied
    if (copied !== null) {
      const done = await swapMonth(sql)
      if (done === 'elsewhere' || done === 'yielded') return done
    }
  }
  return kept
}

/** The swap of a copied month (visit_stats_merge_swap): 'none' when no copy waits, 'redo' when its rows changed since. */
async function swapMonth(sql: Sql): Promise<'none' | 'swapped' | 'redo' | 'yielded' | 'elsewhere'> {
  return jobStep(sql, async (tx) => {
    const [row] = await tx<{ done: 'none' | 'swapped' | 'redo' | null }[]>`select visit_stats_merge_swap() as done`
    return row!.done ?? 'yielded'
  })
}

/** Deleted links' statistics deleted, PURGE_BATCH codes a transaction: undefined when done (or the batches of a run spent). */
async function purgeOrphans(sql: Sql): Promise<'yielded' | 'elsewhere' | undefined> {
  for (let i = 0; i < PURGE_BATCHES; i++) {
    const done = await jobStep(sql, async (tx) => (await tx<{ n: number | null }[]>`select visit_stats_purge(${PURGE_BATCH}) as n`)[0]!.n)
    if (done === 'elsewhere') return done
    if (done === null) return 'yielded'
    if (done < PURGE_BATCH) return undefined
  }
  return undefined
}

/** maintainStats as a number: the partitions of visit_days dropped, or undefined when it did not run (another node ran it, or it yielded). */
export async function runStatsJob(sql: Sql, reduceBefore: string, keepFrom: string, createFrom: string, aheadTo: string): Promise<number | undefined> {
  const outcome = await maintainStats(sql, reduceBefore, keepFrom, createFrom, aheadTo)
  return typeof outcome === 'object' ? outcome.dropped : undefined
}

export interface DayCounts {
  day: string
  humans: number
  bots: number
  /** the sketch's estimate, plus the exact count kept from before the sketches */
  uniques: number
}

/** A link's days and referrers from `from` to `to` (inclusive, "YYYY-MM-DD"); days without visits are absent. */
/** A day's visits under one value of a breakdown. */
export interface DimCount {
  day: string
  dim: Dimension
  value: string
  visits: number
}

export interface StoredStats {
  days: DayCounts[]
  referrers: Array<{ host: string; visits: number }>
  dims: DimCount[]
  /** the link's experiment, as experiment_results gives it (sql/0027), read by experiments/queries.ts resultsOf */
  experiment: unknown
}

/**
 * The owner's live link's days, referrers and breakdowns from `from` to `to` (inclusive,
 * "YYYY-MM-DD"), in one statement (link_stats: a generic plan); days without visits are
 * absent. Undefined: no such link of theirs.
 */
export async function readStats(sql: Sql, userId: string, code: string, from: string, to: string): Promise<StoredStats | undefined> {
  const [row] = await sql<Array<{
    r_days: Array<[day: string, humans: number, bots: number, counted: number, sketch: string | null]>
    r_referrers: Array<[host: string, visits: number]>
    r_dims: Array<[day: string, dim: Dimension, value: string, visits: number]>
    r_experiment: unknown
  }>>`select *, experiment_results(${code}, ${from}::date, ${to}::date) as r_experiment from link_stats(${userId}, ${code}, ${from}::date, ${to}::date)`
  if (row === undefined) return undefined
  return {
    days: row.r_days.map(([day, humans, bots, counted, sketch]) => ({
      day,
      humans,
      bots,
      uniques: counted + (sketch === null ? 0 : Math.round(estimate(Buffer.from(sketch, 'hex')))),
    })),
    referrers: row.r_referrers.map(([host, visits]) => ({ host, visits })),
    dims: row.r_dims.map(([day, dim, value, visits]) => ({ day, dim, value, visits })),
    experiment: row.r_experiment,
  }
}
