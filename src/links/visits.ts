// Visit counting: counted in memory on the redirect path, written in batches, one statement per
// flush. A failed flush keeps its counts for the next one; a crash loses at most one interval.
import type { Sql } from '../db/index.js'
import type { WriteHealth } from '../health.js'
import type { Logger } from '../log.js'
import { addVisits } from './queries.js'

interface Pending {
  count: number
  lastAtMs: number
}

export class VisitCounter {
  #pending = new Map<string, Pending>()
  #timer: NodeJS.Timeout | undefined
  #flushing: Promise<void> = Promise.resolve()

  constructor(
    readonly sql: Sql,
    readonly log: Logger,
    readonly flushMs: number,
    readonly writes?: WriteHealth,
  ) {}

  start(): void {
    this.#timer = setInterval(() => void this.flush(), this.flushMs).unref()
  }

  record(code: string): void {
    const p = this.#pending.get(code)
    if (p === undefined) this.#pending.set(code, { count: 1, lastAtMs: Date.now() })
    else {
      p.count++
      p.lastAtMs = Date.now()
    }
  }

  /** Writes what has been counted. Flushes never overlap. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write())
    return this.#flushing
  }

  async #write(): Promise<void> {
    if (this.#pending.size === 0) return
    const batch = this.#pending
    this.#pending = new Map()
    const codes: string[] = []
    const counts: number[] = []
    const lastAt: string[] = []
    // In code order, so that nodes flushing overlapping codes lock their rows in the same order.
    for (const [code, p] of [...batch].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      codes.push(code)
      counts.push(p.count)
      lastAt.push(new Date(p.lastAtMs).toISOString())
    }
    try {
      await addVisits(this.sql, codes, counts, lastAt)
      this.writes?.record(true)
    } catch (err) {
      this.writes?.record(false)
      this.log.warn('visit flush failed; keeping the counts for the next one', { err, codes: codes.length })
      for (const [code, p] of batch) {
        const now = this.#pending.get(code)
        if (now === undefined) this.#pending.set(code, p)
        else now.count += p.count
      }
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.flush()
  }
}
