// Cache misses on the redirect path, gathered per event-loop turn into one query: under load a
// statement per miss costs the database more than the look-ups themselves, and a burst of misses
// for one code (after a cache clear) becomes a single read.
import type { Circuit } from '../db/circuit.js'
import type { ReadPools } from '../db/read-pools.js'
import { isConnectionLost } from '../db/errors.js'
import { serviceUnavailable } from '../http/errors.js'
import type { Sql } from '../db/types.js'
import { cachedExperiment, type CachedExperiment } from '../experiments/variants.js'
import { findLocations, type LocationRow } from './queries.js'
import { NO_EXPIRY, NO_START } from './link-state.js'
import type { CachedCard } from './redirect-cache.js'
import type { CachedRule, Rule } from './rules.js'
import { toLocation } from './validate.js'

const MAX_BATCH = 500

/** Where a live code redirects to, from when until when (ms since the epoch, or NO_START, NO_EXPIRY); whether a cap limits it, or is reached; or that an operator stopped it. */
export interface Target {
  location: string
  expiresAt: number
  startsAt: number
  capped: boolean
  locked: boolean
  /** undefined: no card */
  card: CachedCard | undefined
  /** undefined: no rules */
  rules: CachedRule[] | undefined
  /** undefined: no variants and no click ids */
  experiment: CachedExperiment | undefined
  exhausted: boolean
  disabled: boolean
}

const cardOf = (r: { title: string | null; description: string | null; image_url: string | null }): CachedCard | undefined =>
  r.title === null && r.description === null && r.image_url === null ? undefined : { title: r.title, description: r.description, imageUrl: r.image_url }

const rulesOf = (rules: Rule[] | null): CachedRule[] | undefined =>
  !Array.isArray(rules) || rules.length === 0 ? undefined : rules.map((r) => ({ if: r.if, location: toLocation(r.url) }))

/** Variants (a paused experiment has none), or with conversions alone the link's own Location as the one arm. */
const experimentOf = (r: LocationRow): CachedExperiment | undefined =>
  r.variants !== null && r.variants.length > 0
    ? cachedExperiment(r.variants.map((v) => v.location), r.variants.map((v) => v.weight), r.conversions)
    : r.conversions ? cachedExperiment([r.location], [1], true) : undefined

type Waiter = { resolve: (target: Target | undefined) => void; reject: (err: unknown) => void }

export class LocationLoader {
  #pending = new Map<string, Waiter[]>()
  #scheduled = false

  constructor(
    readonly sql: Sql,
    readonly circuit?: Circuit,
    /** read replicas (DATABASE_READ_URL): asked first, the primary for what they do not know */
    readonly reads?: ReadPools,
  ) {}

  /** The target of a live code, or undefined. Joins a batch that has not been sent yet. */
  load(code: string): Promise<Target | undefined> {
    // The database cannot be reached (the circuit is open): fail now, so that what the cache
    // held can answer (redirect.ts), or a 503 comes at once.
    if (this.circuit !== undefined && !this.circuit.allows()) return Promise.reject(serviceUnavailable('the database is not answering; retry later'))
    return new Promise((resolve, reject) => {
      const waiters = this.#pending.get(code)
      if (waiters !== undefined) waiters.push({ resolve, reject })
      else this.#pending.set(code, [{ resolve, reject }])
      if (this.#pending.size >= MAX_BATCH) this.#send()
      else if (!this.#scheduled) {
        this.#scheduled = true
        setImmediate(() => this.#send())
      }
    })
  }

  #send(): void {
    this.#scheduled = false
    if (this.#pending.size === 0) return
    const batch = this.#pending
    this.#pending = new Map()
    const codes = [...batch.keys()]
    // Whatever fails here, reading the rows included, reaches the waiters: a throw in a callback
    // of its own would be a rejection nobody handles, and the process would end.
    this.#find(codes)
      .then((rows) => {
        this.circuit?.succeeded()
        return new Map(
          rows.map((r) => [
            r.code,
            { location: r.location, expiresAt: r.expires_at?.getTime() ?? NO_EXPIRY, startsAt: r.starts_at?.getTime() ?? NO_START, capped: r.capped, locked: r.locked, card: cardOf(r), rules: rulesOf(r.rules), experiment: experimentOf(r), exhausted: r.exhausted, disabled: r.disabled },
          ]),
        )
      })
      .then(
        (found) => {
          for (const [code, waiters] of batch) for (const w of waiters) w.resolve(found.get(code))
        },
        (err: unknown) => {
          this.circuit?.settled(err)
          for (const waiters of batch.values()) for (const w of waiters) w.reject(err)
        },
      )
  }

  /** On a replica what it may answer; on the primary the rest, and what the replica did not know (it may lag). */
  async #find(codes: string[]) {
    const reads = this.reads
    const onReplica = reads?.replicated === true ? codes.filter((code) => reads.replicaMay(code)) : []
    const rows = onReplica.length === 0 ? [] : await reads!.read((sql) => findLocations(sql, onReplica))
    const found = new Set(rows.map((r) => r.code))
    const rest = rows.length === 0 ? codes : codes.filter((code) => !found.has(code))
    if (rest.length === 0) return rows
    // A read that met a killed connection is sent once more: the pool opens a fresh one.
    const onPrimary = () => (reads === undefined ? findLocations(this.sql, rest) : reads.onPrimary((sql) => findLocations(sql, rest)))
    const more = await onPrimary().catch((err: unknown) => (isConnectionLost(err) ? onPrimary() : Promise.reject(err)))
    return rows.length === 0 ? more : [...rows, ...more]
  }
}
