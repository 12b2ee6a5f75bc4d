// Variant visits, tallied in memory on the redirect path (a count and a sketch of visitors per
// link, day and variant) and written every VISIT_FLUSH_MS; after each flush, links whose owner
// asked for it have a confident winner promoted (queries.ts promoteWinner): never on the redirect path.
// A flush that may have committed (it failed at the COMMIT) is tried again under the same id, which
// the database remembers in visit_flushes, as visits.ts does: a variant's visits count once.
import { randomUUID } from 'node:crypto'
import type { Sql } from '../db/types.js'
import type { Logger } from '../log.js'
import { addHash, emptySketch, mergeSketch } from '../stats/sketch.js'
import { dateOf } from '../stats/visits.js'
import { judge } from './significance.js'
import { promoteWinner, promotionCandidates, sweepExperiments, writeVariantVisits, type VariantBatch } from './queries.js'

const DAY_MS = 86_400_000
/** (link, day, variant) entries kept between flushes (each holds a 1 KiB sketch); more are not counted. */
const MAX_PENDING = 20_000
const SWEEP_MS = 60 * 60_000

interface Pending {
  code: string
  dayNumber: number
  variant: number
  visits: number
  sketch: Uint8Array
}

/** A batch whose write may have committed: tried again under its id until the outcome is known. */
interface Unsure {
  id: string
  batch: Map<string, Pending>
}

export interface ExperimentOptions {
  flushMs: number
  /** CONVERSION_WINDOW_DAYS */
  windowDays: number
  retentionDays: number
}

export class ExperimentCounter {
  #pending = new Map<string, Pending>()
  #unsure: Unsure[] = []
  /** links with visits or conversions since the last look for winners */
  #touched = new Set<string>()
  #dropped = false
  #timers: NodeJS.Timeout[] = []
  #flushing: Promise<void> = Promise.resolve()

  constructor(
    readonly sql: Sql,
    readonly log: Logger,
    /** the experiment secret (queries.ts experimentSecret) */
    readonly secret: Buffer,
    readonly options: ExperimentOptions,
    /** tells this node's cache that a link changed (a promotion) */
    readonly forget: (code: string) => void,
  ) {}

  start(): void {
    this.#timers.push(setInterval(() => void this.flush(), this.options.flushMs).unref())
    this.#timers.push(setInterval(() => void this.sweep(), SWEEP_MS).unref())
  }

  /** A GET redirect sent to `variant`, by the visitor whose day hash is `hash` (variants.ts visitorHash). The hot path. */
  record(code: string, variant: number, dayNumber: number, hash: Uint8Array): void {
    const key = `${code} ${dayNumber} ${variant}`
    let p = this.#pending.get(key)
    if (p === undefined) {
      if (this.#pending.size >= MAX_PENDING) {
        this.#dropped = true
        return
      }
      this.#pending.set(key, (p = { code, dayNumber, variant, visits: 0, sketch: emptySketch() }))
    }
    p.visits++
    // Not the bytes that chose the variant: each variant's visitors would fill only its share of the registers.
    addHash(p.sketch, hash.subarray(8))
  }

  /** A conversion was counted for `code`: its winner is looked for at the next flush. */
  converted(code: string): void {
    this.#touched.add(code)
  }

  /** Writes what was counted, then promotes confident winners. Flushes never overlap. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write())
    return this.#flushing
  }

  async #write(): Promise<void> {
    const batch = this.#pending
    this.#pending = new Map()
    if (this.#dropped) this.log.warn('too many variant counts waited for a flush; some visits were not counted for their variant')
    this.#dropped = false
    const fresh = batch.size === 0 ? undefined : { id: randomUUID(), batch }
    const attempt = fresh === undefined ? this.#unsure : [...this.#unsure, fresh]
    if (attempt.length > 0) {
      let committing = false
      try {
        const rowsFor = (recorded: ReadonlySet<string>) => rowsOf(merged(attempt.filter((a) => recorded.has(a.id)).map((a) => a.batch)))
        await writeVariantVisits(this.sql, attempt.map((a) => a.id), rowsFor, () => (committing = true))
        this.#unsure = []
        for (const a of attempt) for (const p of a.batch.values()) this.#touched.add(p.code)
      } catch (err) {
        if (committing) {
          this.#unsure = attempt
          this.log.warn('variant visit flush failed at its commit; trying it again under the same id', { err, batches: attempt.length })
        } else {
          if (fresh !== undefined) this.#putBack(fresh.batch)
          this.log.warn('variant visit flush failed; keeping the counts for the next one', { err })
        }
        return
      }
    }
    await this.#promote()
  }

  async #promote(): Promise<void> {
    if (this.#touched.size === 0) return
    const codes = [...this.#touched]
    this.#touched.clear()
    try {
      for (const c of await promotionCandidates(this.sql, codes)) {
        const verdict = judge(c.arms)
        if (verdict.winner === null) continue
        if (await promoteWinner(this.sql, c.code, c.variants, c.variants[verdict.winner]!)) {
          this.forget(c.code)
          this.log.info('experiment winner promoted', { code: c.code, variant: verdict.winner, p_value: verdict.p_value })
        }
      }
    } catch (err) {
      for (const code of codes) this.#touched.add(code)
      this.log.warn('looking for experiment winners failed; trying again at the next flush', { err })
    }
  }

  #putBack(batch: Map<string, Pending>): void {
    addInto(this.#pending, batch)
  }

  async sweep(nowMs = Date.now()): Promise<void> {
    const today = Math.floor(nowMs / DAY_MS)
    try {
      await sweepExperiments(this.sql, dateOf(today - this.options.windowDays), dateOf(today - this.options.retentionDays + 1))
    } catch (err) {
      this.log.warn('experiment sweep failed; retrying later', { err })
    }
  }

  async stop(): Promise<void> {
    for (const t of this.#timers) clearInterval(t)
    await this.flush()
  }
}

/** Adds `batch`'s counts and sketches into `into` (its entries are taken over, not copied). */
function addInto(into: Map<string, Pending>, batch: Map<string, Pending>): void {
  for (const [key, p] of batch) {
    const now = into.get(key)
    if (now === undefined) into.set(key, p)
    else {
      now.visits += p.visits
      mergeSketch(now.sketch, p.sketch)
    }
  }
}

/** Several batches as one, leaving each as it was (a batch may be tried again). */
function merged(batches: Map<string, Pending>[]): Map<string, Pending> {
  const all = new Map<string, Pending>()
  for (const batch of batches) for (const [key, p] of batch) {
    const now = all.get(key)
    if (now === undefined) all.set(key, { ...p, sketch: new Uint8Array(p.sketch) })
    else {
      now.visits += p.visits
      mergeSketch(now.sketch, p.sketch)
    }
  }
  return all
}

function rowsOf(batch: Map<string, Pending>): VariantBatch {
  const rows: VariantBatch = { codes: [], days: [], variants: [], visits: [], sketches: [] }
  const sorted = [...batch.values()].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : a.dayNumber - b.dayNumber || a.variant - b.variant))
  for (const p of sorted) {
    rows.codes.push(p.code)
    rows.days.push(dateOf(p.dayNumber))
    rows.variants.push(p.variant)
    rows.visits.push(p.visits)
    rows.sketches.push(Buffer.from(p.sketch).toString('hex'))
  }
  return rows
}
