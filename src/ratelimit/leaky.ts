// Leaky-bucket counters: a level that drains at a steady rate and may be raised by one at a time
// up to a limit. In memory for one process, or in PostgreSQL (leaky_bucket_add) for a cluster.
// Used for failed logins per account and for password changes and deletions (password-limits.ts).
import type { Sql } from '../db/types.js'
import { rateLimited } from '../http/errors.js'
import { FULL_SWEEP_GAP_MS, MAX_TRACKED_CLIENTS } from './limiter.js'

export interface Level {
  /** whether the one was added (false: it would have gone past the limit) */
  added: boolean
  /** the level after this call */
  level: number
}

export interface LeakyBuckets {
  add(key: string, limit: number, drainPerSecond: number): Level | Promise<Level>
  /** The level now, drained, without adding (0 for a key never added to). */
  level(key: string, drainPerSecond: number): number | Promise<number>
  close(): void
}

/** An allowance: `limit` at once, draining `drainPerSecond`. */
export interface Allowance {
  limit: number
  drainPerSecond: number
}

/** Takes one from `key`'s allowance, or throws 429 with the whole seconds until one fits. */
export async function takeOrRefuse(buckets: LeakyBuckets, key: string, { limit, drainPerSecond }: Allowance): Promise<void> {
  const { added, level } = await buckets.add(key, limit, drainPerSecond)
  if (!added) throw rateLimited(Math.max(1, Math.ceil((level + 1 - limit) / drainPerSecond)))
}

const SWEEP_MS = 10_000

/** The level after draining for `elapsedSeconds`, and after adding one if that fits under `limit`. */
export function drainAndAdd(level: number, elapsedSeconds: number, limit: number, drainPerSecond: number): Level {
  const drained = Math.max(0, level - Math.max(0, elapsedSeconds) * drainPerSecond)
  const added = drained + 1 <= limit
  return { added, level: added ? drained + 1 : drained }
}

interface Bucket {
  level: number
  atMs: number
  emptyAtMs: number
}

/** In a Map with an idle sweep and the rate limiter's hard cap, so a flood of keys is bounded. */
export class MemoryLeakyBuckets implements LeakyBuckets {
  readonly buckets = new Map<string, Bucket>()
  readonly #timer: NodeJS.Timeout
  #sweptAt = -Infinity

  constructor(
    readonly now: () => number = () => performance.now(),
    readonly maxKeys = MAX_TRACKED_CLIENTS,
  ) {
    this.#timer = setInterval(() => this.sweep(), SWEEP_MS).unref()
  }

  add(key: string, limit: number, drainPerSecond: number): Level {
    const now = this.now()
    const bucket = this.buckets.get(key)
    if (bucket === undefined && this.buckets.size >= this.maxKeys) this.#makeRoom(now)
    const result = drainAndAdd(bucket?.level ?? 0, bucket === undefined ? 0 : (now - bucket.atMs) / 1000, limit, drainPerSecond)
    // Re-inserted, so the Map's order stays oldest-touched first.
    this.buckets.delete(key)
    this.buckets.set(key, { level: result.level, atMs: now, emptyAtMs: now + (result.level / drainPerSecond) * 1000 })
    return result
  }

  level(key: string, drainPerSecond: number): number {
    const bucket = this.buckets.get(key)
    return bucket === undefined ? 0 : Math.max(0, bucket.level - Math.max(0, (this.now() - bucket.atMs) / 1000) * drainPerSecond)
  }

  sweep(now = this.now()): void {
    this.#sweptAt = now
    for (const [key, bucket] of this.buckets) if (bucket.emptyAtMs <= now) this.buckets.delete(key)
  }

  /** As the rate limiter's: a sweep at most every FULL_SWEEP_GAP_MS, else the oldest goes. */
  #makeRoom(now: number): void {
    if (now - this.#sweptAt >= FULL_SWEEP_GAP_MS) this.sweep(now)
    if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!)
  }

  close(): void {
    clearInterval(this.#timer)
  }
}

/** Drops the rows of leaky_buckets that have drained: they are the same as none. */
export async function sweepStoredBuckets(sql: Sql): Promise<void> {
  await sql`delete from leaky_buckets where empty_at < now()`
}

/** In PostgreSQL, one atomic statement per call, so every node sees the same level. */
export class PostgresLeakyBuckets implements LeakyBuckets {
  readonly #timer: NodeJS.Timeout

  constructor(readonly sql: Sql) {
    this.#timer = setInterval(() => void this.sweep().catch(() => {}), SWEEP_MS).unref()
  }

  async add(key: string, limit: number, drainPerSecond: number): Promise<Level> {
    const [row] = await this.sql<Level[]>`select added, level from leaky_bucket_add(${key}, ${limit}, ${drainPerSecond})`
    return row!
  }

  async level(key: string, drainPerSecond: number): Promise<number> {
    const [row] = await this.sql<{ level: number }[]>`select leaky_bucket_level(${key}, ${drainPerSecond}) as level`
    return row!.level
  }

  sweep(): Promise<void> {
    return sweepStoredBuckets(this.sql)
  }

  close(): void {
    clearInterval(this.#timer)
  }
}
