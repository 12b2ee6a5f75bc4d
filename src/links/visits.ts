// Visit counting: tallied in memory on the redirect path (visit-tally.ts) and written in batches,
// one transaction per flush: each link's total and, per UTC day, its humans and bots, referrer
// hosts and the hashes of its distinct human visitors. A failed flush keeps its counts for the
// next one; a crash loses at most one interval.
import { hash } from 'node:crypto'
import type { BlockList } from 'node:net'
import { isConnectionError } from '../db/errors.js'
import type { Sql } from '../db/types.js'
import type { WriteHealth } from '../health.js'
import type { Logger } from '../log.js'
import type { Metrics } from '../metrics.js'
import { Breakdowns } from './breakdowns.js'
import { UNKNOWN_COUNTRY, type CountryOf } from './geo.js'
import { daySalt, writeVisitBatch, type VisitBatch } from './stats-queries.js'
import { DAY_MS, VisitTally, type Pending, type Visitor } from './visit-tally.js'

/** Hex digits of a visitor hash kept: 16 bytes. */
const HASH_HEX = 32

export interface VisitOptions {
  flushMs: number
  /** per-day statistics (VISIT_STATS); off: only each link's total */
  stats: boolean
  trustProxy: BlockList | undefined
  /** the country of a client address (geo.ts); without it, every country is "unknown" */
  countryOf?: CountryOf
  /** told how each flush went, for /healthz */
  writes?: WriteHealth
  /** told how long each flush took, and of flushes the database refused */
  metrics?: Pick<Metrics, 'visitFlush' | 'databaseError'>
}

export class VisitCounter {
  readonly #tally: VisitTally
  readonly #breakdowns: Breakdowns
  /** day → salt, as hex (what is hashed) */
  readonly #salts = new Map<string, string>()
  #timer: NodeJS.Timeout | undefined
  #flushing: Promise<void> = Promise.resolve()

  constructor(
    readonly sql: Sql,
    readonly log: Logger,
    readonly options: VisitOptions,
  ) {
    this.#tally = new VisitTally(options.stats, options.trustProxy)
    this.#breakdowns = new Breakdowns(options.countryOf ?? (() => UNKNOWN_COUNTRY))
  }

  start(): void {
    this.#timer = setInterval(() => void this.flush(), this.options.flushMs).unref()
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
    const { batch, visitorsDropped } = this.#tally.take()
    if (visitorsDropped) this.log.warn('too many visitors waited for a flush; some were not counted as unique')
    if (batch.size === 0) return
    const started = performance.now()
    try {
      const rows = await this.#toRows(batch)
      this.#breakdowns.forgetAddresses()
      await writeVisitBatch(this.sql, rows)
      this.options.writes?.record(true)
      this.options.metrics?.visitFlush((performance.now() - started) / 1000)
    } catch (err) {
      this.options.writes?.record(false)
      if (isConnectionError(err)) this.options.metrics?.databaseError()
      this.log.warn('visit flush failed; keeping the counts for the next one', { err, codes: batch.size })
      this.#tally.putBack(batch)
    }
  }

  /** The batch as rows, in code then day order; visitors hashed under their day's salt. */
  async #toRows(batch: Map<string, Pending>): Promise<VisitBatch> {
    const rows: VisitBatch = {
      links: { codes: [], counts: [], lastAt: [] },
      days: { codes: [], days: [], humans: [], bots: [] },
      referrers: { codes: [], days: [], hosts: [], visits: [] },
      hashes: { codes: [], days: [], hashes: [] },
      dims: { codes: [], days: [], dims: [], values: [], visits: [] },
    }
    for (const [code, p] of [...batch].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
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
        for (const [dim, counts] of this.#breakdowns.of(d.agents, d.addresses)) {
          for (const [value, visits] of [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
            rows.dims.codes.push(code)
            rows.dims.days.push(day)
            rows.dims.dims.push(dim)
            rows.dims.values.push(value)
            rows.dims.visits.push(visits)
          }
        }
        if (d.visitors.size === 0) continue
        const salt = await this.#salt(day)
        for (const [address, agents] of d.visitors) {
          for (const agent of agents) {
            rows.hashes.codes.push(code)
            rows.hashes.days.push(day)
            // SHA-256 of secret salt, code and visitor (the salt first and of fixed length, so
            // no input can pass for another); the code in it keeps one visitor's hashes on two
            // links apart. crypto.hash is one call, a third of createHmac's cost per visitor.
            rows.hashes.hashes.push(hash('sha256', `${salt}\n${code}\n${address}\n${agent}`, 'hex').slice(0, HASH_HEX))
          }
        }
      }
    }
    return rows
  }

  /** Every node hashes a day's visitors under the same salt (see stats-queries.ts daySalt). */
  async #salt(day: string): Promise<string> {
    let salt = this.#salts.get(day)
    if (salt === undefined) {
      salt = (await daySalt(this.sql, day)).toString('hex')
      // Only the last few days are wanted: forget older salts as newer ones arrive.
      const oldest = dateOf(Math.floor(Date.now() / DAY_MS) - 2)
      for (const d of this.#salts.keys()) if (d < oldest) this.#salts.delete(d)
      this.#salts.set(day, salt)
    }
    return salt
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.flush()
  }
}

/** "YYYY-MM-DD" of a day number (days since 1970-01-01, UTC). */
export const dateOf = (dayNumber: number): string => new Date(dayNumber * DAY_MS).toISOString().slice(0, 10)
