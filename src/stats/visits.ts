// Visit counting: tallied in memory (visit-tally.ts; with full statistics on a thread of its own,
// tally-thread.ts, the redirect path only appending) and written in batches,
// one transaction per flush: each link's total and, per UTC day, its humans and bots, referrer
// hosts and a sketch of its distinct human visitors (sketch.ts). A flush that surely failed puts its counts
// back for the next one; one that may have committed (it failed at the COMMIT) is tried again
// under the same id, which the database remembers: nothing is counted twice. A crash loses at
// most one interval.
import { randomUUID } from 'node:crypto'
import type { BlockList } from 'node:net'
import { isConnectionError } from '../db/errors.js'
import type { Sql } from '../db/types.js'
import type { Logger } from '../log.js'
import type { Metrics } from '../metrics.js'
import { settlesWithin } from '../settle.js'
import { splitDimKey } from './breakdowns.js'
import { daySalt, FLUSH_LIMIT_MS, writeVisitFlush, type VisitBatch } from './queries.js'
import { DAY_MS, dayRegisters, merged, VisitTally, type Pending, type Taken, type Visitor } from './visit-tally.js'
import { TallyThread } from './tally-thread.js'

/**
 * Links per chunk of a flush (writeVisitFlush): one statement's rows (the tally counted the
 * breakdowns and mostly hashed the visitors), built in slices of SLICE_MS between which redirects
 * are answered; a flush of 100,000 links is 200 chunks in its one transaction.
 */
export const FLUSH_CHUNK_LINKS = 500
/** How long building a chunk's rows runs before it lets the event loop turn: about a cached redirect's p99 alone. */
const SLICE_MS = 0.5

export interface VisitOptions {
  flushMs: number
  /** per-day statistics (VISIT_STATS); off: only each link's total */
  stats: boolean
  trustProxy: BlockList | undefined
  /** the country database (GEO_DB: undefined for the bundled one, "off", or a file; geo.ts), opened by the tally thread */
  geoDb?: string
  /** the longest a flush may take (FLUSH_LIMIT_MS unless a test shortens it) */
  flushLimitMs?: number
  /** told how long each flush took, and of flushes the database refused */
  metrics?: Pick<Metrics, 'visitFlush' | 'databaseError'>
}

/** What the counter asks of a tally: a VisitTally here, or one on its own thread. */
interface Tally {
  readonly waiting: number
  record(code: string, visitor: Visitor, atMs: number): void
  /** the days of the visits recorded since the last take (a thread that hashes visitors wants their salts) */
  days?(): Iterable<number>
  take(salts?: ReadonlyMap<number, string>): Taken | Promise<Taken>
  putBack(batch: Map<string, Pending>): void
  close?(): Promise<void>
}

/** A batch whose write may have committed: tried again under its id until the outcome is known. */
interface Unsure {
  id: string
  batch: Map<string, Pending>
}

export class VisitCounter {
  readonly #tally: Tally
  #unsure: Unsure[] = []
  /** day → salt, as hex (what is hashed) */
  readonly #saltByDay = new Map<string, string>()
  #timer: NodeJS.Timeout | undefined
  #flushing: Promise<void> = Promise.resolve()

  constructor(
    readonly sql: Sql,
    readonly log: Logger,
    readonly options: VisitOptions,
  ) {
    // Totals alone are a count per link: folded here. Full statistics fold on their own thread.
    this.#tally = options.stats
      ? new TallyThread({ trustProxy: options.trustProxy, geoDb: options.geoDb, log })
      : new VisitTally(false, options.trustProxy)
  }

  start(): void {
    this.#next(this.options.flushMs)
  }

  /** The next timed flush, `ms` from now; then the one after, paced by how long this one took. */
  #next(ms: number): void {
    this.#timer = setTimeout(async () => {
      const started = performance.now()
      await this.flush().catch(() => undefined) // #write logs its own failures
      if (this.#timer !== undefined) this.#next(flushGap(this.options.flushMs, performance.now() - started))
    }, ms).unref()
  }

  /** Visits counted and not yet written. */
  get waiting(): number {
    return this.#tally.waiting
  }

  /** A GET redirect served. The hot path: appends, nothing else. */
  record(code: string, visitor: Visitor): void {
    this.#tally.record(code, visitor, Date.now())
  }

  /** Writes what has been counted. Flushes never overlap. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write())
    return this.#flushing
  }

  async #write(): Promise<void> {
    // The tally thread hashes the visitors of the days whose salts it is given; without them (the
    // database cannot be reached) they are hashed here, below, once the salts can be read.
    const given = await this.#saltsOf(this.#tally.days?.() ?? []).catch(() => undefined)
    const { batch, visitorsDropped } = await this.#tally.take(given)
    if (visitorsDropped) this.log.warn('too many visitors waited for a flush; some were not counted as unique')
    const fresh = batch.size === 0 ? undefined : { id: randomUUID(), batch }
    const attempt = fresh === undefined ? this.#unsure : [...this.#unsure, fresh]
    if (attempt.length === 0) return
    const started = performance.now()
    let committing = false
    try {
      const salts = await this.#salts(attempt)
      const chunksFor = (recorded: ReadonlySet<string>) => this.#chunks(merged(attempt.filter((a) => recorded.has(a.id)).map((a) => a.batch)), salts)
      const write = writeVisitFlush(this.sql, attempt.map((a) => a.id), chunksFor, () => (committing = true))
      const limitMs = this.options.flushLimitMs ?? FLUSH_LIMIT_MS
      if ((await settlesWithin(write, limitMs)) === 'late') {
        // A statement stuck on a connection that never answers would hold every later flush: this
        // one is left to end by itself (its transaction's own time limits end it in the database)
        // and is tried again under the same ids, so it counts once whichever commits.
        write.catch(() => undefined)
        this.#unsure = attempt
        this.options.metrics?.databaseError()
        this.log.warn('visit flush did not finish in time; trying it again under the same id', { batches: attempt.length, limit_ms: limitMs })
        return
      }
      await write
      this.#unsure = []
      this.options.metrics?.visitFlush((performance.now() - started) / 1000)
    } catch (err) {
      if (isConnectionError(err)) this.options.metrics?.databaseError()
      if (committing) {
        this.#unsure = attempt
        this.log.warn('visit flush failed at its commit; trying it again under the same id', { err, batches: attempt.length })
      } else {
        if (fresh !== undefined) this.#tally.putBack(fresh.batch)
        this.log.warn('visit flush failed; keeping the counts for the next one', { err, codes: batch.size })
      }
    }
  }

  /** The batch as rows, FLUSH_CHUNK_LINKS links at a time, in code order; each built only when asked for. */
  async *#chunks(batch: ReadonlyMap<string, Pending>, salts: ReadonlyMap<number, string>): AsyncGenerator<VisitBatch> {
    const codes = [...batch.keys()].sort() // code units, as the database's "C" collation orders them
    for (let i = 0; i < codes.length; i += FLUSH_CHUNK_LINKS) yield this.#toRows(codes.slice(i, i + FLUSH_CHUNK_LINKS), batch, salts)
  }

  /**
   * These links' rows, in code then day order; visitors as sketch registers (those the tally did
   * not hash, hashed here under their day's salt). Every SLICE_MS of it the event loop turns, so redirects are answered in between.
   */
  async #toRows(codes: readonly string[], batch: ReadonlyMap<string, Pending>, salts: ReadonlyMap<number, string>): Promise<VisitBatch> {
    const rows: VisitBatch = {
      links: { codes: [], counts: [], lastAt: [] },
      days: { codes: [], days: [], humans: [], bots: [] },
      referrers: { codes: [], days: [], hosts: [], visits: [] },
      sketches: { codes: [], days: [], registers: [] },
      dims: { codes: [], days: [], dims: [], values: [], visits: [] },
    }
    const slice = slices()
    for (const code of codes) {
      if (slice.due()) await slice.turn()
      const p = batch.get(code)!
      rows.links.codes.push(code)
      rows.links.counts.push(p.count)
      rows.links.lastAt.push(new Date(p.lastAtMs).toISOString())
      for (const [dayNumber, d] of [...p.days].sort(([a], [b]) => a - b)) {
        const day = dateOf(dayNumber)
        rows.days.codes.push(code)
        rows.days.days.push(day)
        rows.days.humans.push(d.humans)
        rows.days.bots.push(d.bots)
        for (const [host, visits] of d.referrers) {
          rows.referrers.codes.push(code)
          rows.referrers.days.push(day)
          rows.referrers.hosts.push(host)
          rows.referrers.visits.push(visits)
        }
        // Keys sort as (dim, value): the rows go in the order the statement locks them.
        for (const key of [...d.dims.keys()].sort()) {
          const [dim, value] = splitDimKey(key)
          rows.dims.codes.push(code)
          rows.dims.days.push(day)
          rows.dims.dims.push(dim)
          rows.dims.values.push(value)
          rows.dims.visits.push(d.dims.get(key)!)
        }
        // The day's visitors in this batch, as registers; the flush applies them to the stored sketch.
        const registers = d.visitors.size === 0 ? d.registers : dayRegisters(code, d, salts.get(dayNumber)!)
        if (registers.length === 0) continue
        rows.sketches.codes.push(code)
        rows.sketches.days.push(day)
        rows.sketches.registers.push(registers)
      }
    }
    return rows
  }

  /** The salts of these days, by day number. */
  async #saltsOf(days: Iterable<number>): Promise<Map<number, string>> {
    const salts = new Map<number, string>()
    for (const dayNumber of days) salts.set(dayNumber, await this.#salt(dateOf(dayNumber)))
    return salts
  }

  /** The salts of the days that have visitors not yet hashed in these batches, by day number. */
  async #salts(batches: ReadonlyArray<Unsure>): Promise<Map<number, string>> {
    const salts = new Map<number, string>()
    const slice = slices()
    for (const { batch } of batches) {
      for (const p of batch.values()) {
        if (slice.due()) await slice.turn()
        for (const [dayNumber, d] of p.days) {
          if (d.visitors.size > 0 && !salts.has(dayNumber)) salts.set(dayNumber, await this.#salt(dateOf(dayNumber)))
        }
      }
    }
    return salts
  }

  /** Every node hashes a day's visitors under the same salt (see stats-queries.ts daySalt). */
  async #salt(day: string): Promise<string> {
    let salt = this.#saltByDay.get(day)
    if (salt === undefined) {
      salt = (await daySalt(this.sql, day)).toString('hex')
      // Only the last few days are wanted: forget older salts as newer ones arrive.
      const oldest = dateOf(Math.floor(Date.now() / DAY_MS) - 2)
      for (const d of this.#saltByDay.keys()) if (d < oldest) this.#saltByDay.delete(d)
      this.#saltByDay.set(day, salt)
    }
    return salt
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    try {
      await this.flush()
    } finally {
      await this.#tally.close?.()
    }
  }
}

/**
 * The wait before the next timed flush: VISIT_FLUSH_MS, or nine times as long as the last flush
 * took, so that flushes keep at most a tenth of the database busy however many links are visited
 * (a flush costs a row per link, day and breakdown, which grows far slower than its visits when
 * it waits longer); never more than MAX_FLUSH_GAP_MS, as `visits` may lag only a few seconds.
 */
export function flushGap(flushMs: number, tookMs: number): number {
  return Math.max(flushMs, Math.min(MAX_FLUSH_GAP_MS, FLUSH_PAUSE_FACTOR * tookMs))
}
const FLUSH_PAUSE_FACTOR = 9
const MAX_FLUSH_GAP_MS = 5_000

/** A long loop's pause points: `due()` once SLICE_MS has run since the event loop last turned, and `turn()` to let it. */
function slices(): { due(): boolean; turn(): Promise<void> } {
  let at = performance.now()
  return {
    due: () => performance.now() - at > SLICE_MS,
    turn: () =>
      new Promise<void>((resolve) =>
        setImmediate(() => {
          at = performance.now()
          resolve()
        }),
      ),
  }
}

/** "YYYY-MM-DD" of a day number (days since 1970-01-01, UTC). */
export const dateOf = (dayNumber: number): string => new Date(dayNumber * DAY_MS).toISOString().slice(0, 10)
