// Per-client-IP limiters: in memory for one process, or in PostgreSQL for a cluster (contract §7).
import type { Sql } from '../db/types.js'
import { decide, RATE_CAPACITY, RATE_PER_SECOND, TokenBucket, type Decision } from './bucket.js'

export interface Limiter {
  take(key: string): Decision | Promise<Decision>
  close(): void
}

export const MAX_TRACKED_CLIENTS = 100_000
const SWEEP_MS = 10_000
/**
 * At the cap, a new key sweeps the table first, but not again within this: when no bucket is idle
 * (a flood of distinct addresses), a sweep per new key walked the whole table each time (0.6 ms at
 * 100,000) and found nothing; between sweeps the oldest goes at once.
 */
export const FULL_SWEEP_GAP_MS = 1_000

/** Buckets in a Map with an idle sweep and a hard cap, so a flood of addresses is bounded. */
export class MemoryLimiter implements Limiter {
  readonly buckets = new Map<string, TokenBucket>()
  readonly #timer: NodeJS.Timeout
  #sweptAt = -Infinity

  constructor(
    readonly now: () => number = () => performance.now(),
    readonly maxClients = MAX_TRACKED_CLIENTS,
  ) {
    this.#timer = setInterval(() => this.sweep(), SWEEP_MS).unref()
  }

  take(key: string): Decision {
    const now = this.now()
    let bucket = this.buckets.get(key)
    if (bucket === undefined) {
      if (this.buckets.size >= this.maxClients) this.#makeRoom(now)
      bucket = new TokenBucket(now)
      this.buckets.set(key, bucket)
    }
    return bucket.take(now)
  }

  sweep(now = this.now()): void {
    this.#sweptAt = now
    for (const [key, bucket] of this.buckets) if (bucket.isIdle(now)) this.buckets.delete(key)
  }

  #makeRoom(now: number): void {
    if (now - this.#sweptAt >= FULL_SWEEP_GAP_MS) this.sweep(now)
    // Still full: drop the oldest-created bucket. Only a flood of distinct addresses gets here.
    if (this.buckets.size >= this.maxClients) this.buckets.delete(this.buckets.keys().next().value!)
  }

  close(): void {
    clearInterval(this.#timer)
  }
}

/**
 * The bucket lives in PostgreSQL, decided by one atomic statement, so the burst of 5 holds across
 * every node. A node that has just seen a bucket empty refuses locally until a token can be back:
 * other nodes only take tokens, never add them, so that refusal is never wrong.
 */
export class PostgresLimiter implements Limiter {
  readonly #blockedUntil = new Map<string, number>()
  readonly #timer: NodeJS.Timeout

  constructor(
    readonly sql: Sql,
    readonly now: () => number = () => performance.now(),
  ) {
    this.#timer = setInterval(() => void this.sweep().catch(() => {}), SWEEP_MS).unref()
  }

  async take(key: string): Promise<Decision> {
    const until = this.#blockedUntil.get(key)
    if (until !== undefined) {
      const waitMs = until - this.now()
      if (waitMs > 0) return decide(false, 1 - (waitMs / 1000) * RATE_PER_SECOND, RATE_PER_SECOND)
      this.#blockedUntil.delete(key)
    }
    const [row] = await this.sql<{ allowed: boolean; remaining: number }[]>`
      select allowed, remaining from take_rate_token(${key}, ${RATE_CAPACITY}, ${RATE_PER_SECOND})`
    const { allowed, remaining } = row!
    if (!allowed) {
      if (this.#blockedUntil.size >= MAX_TRACKED_CLIENTS) this.#blockedUntil.clear()
      this.#blockedUntil.set(key, this.now() + ((1 - remaining) / RATE_PER_SECOND) * 1000)
    }
    return decide(allowed, remaining, RATE_PER_SECOND)
  }

  /** A bucket idle for a second is full again, the same as no row at all. */
  async sweep(): Promise<void> {
    const now = this.now()
    for (const [key, until] of this.#blockedUntil) if (until <= now) this.#blockedUntil.delete(key)
    await this.sql`delete from rate_buckets where updated_at < now() - interval '10 seconds'`
  }

  close(): void {
    clearInterval(this.#timer)
  }
}
