// The redirect cache: code → ready Location (or a capped one), "disabled", "exhausted", or a
// short-lived "unknown", within a byte budget, evicted by CLOCK (docs/decisions.md, "Links").
import { DISABLED, EXHAUSTED, MISSING, NO_EXPIRY, NO_START, stopOf, type Stop } from './link-state.js'
import type { CachedExperiment } from '../experiments/variants.js'
import type { CachedRule } from './rules.js'

const ENTRY_OVERHEAD_BYTES = 112 // Map slot, key string and the entry object, roughly
const MISSING_ENTRY_BYTES = ENTRY_OVERHEAD_BYTES
/**
 * Codes written lately that the cache remembers, per generation: a read that takes longer than
 * this many writes (a few seconds of the busiest creating) is refused its fill, as one overlapping
 * a clear is.
 */
export const RECENT_WRITES = 4_096

/** A link's preview card, as its owner wrote it (at least one part set). */
export interface CachedCard {
  title: string | null
  description: string | null
  imageUrl: string | null
}

/**
 * A link that needs more than its Location: a cap (max_visits: each GET takes a visit from the
 * database before its 302, caps.ts), a password (asked before the redirect, redirect.ts unlock),
 * a preview card (for the fetchers of preview-fetchers.ts), redirect rules (rules.ts: evaluated in
 * memory, `location` is their fallback), variants or click ids (experiments/variants.ts: chosen
 * in memory when no rule matches), or several of them.
 */
export class Guarded {
  constructor(
    readonly location: string,
    readonly capped: boolean,
    readonly locked: boolean,
    readonly card: CachedCard | undefined = undefined,
    readonly rules: readonly CachedRule[] | undefined = undefined,
    readonly experiment: CachedExperiment | undefined = undefined,
  ) {}
}

/**
 * What an entry holds: what `set` is given. DISABLED (an operator stopped the link) and EXHAUSTED
 * (its cap was reached) are kept like a Location, with the link's times, until a change is notified.
 */
export type Stored = string | Guarded | typeof DISABLED | typeof EXHAUSTED
/** What `get` knows: a Location, a Guarded one, or where the link stops (link-state.ts). */
export type Answer = string | Guarded | Stop

interface Entry {
  /** the Location (plain or Guarded), DISABLED, EXHAUSTED, or null for "unknown" */
  location: Stored | null
  /** for "unknown": until when (ms, monotonic) */
  until: number
  /** the link's expiry (ms since the epoch, wall clock), or NO_EXPIRY */
  expiresAt: number
  /** the link's start (ms since the epoch, wall clock), or NO_START: before it, the code is unknown */
  startsAt: number
  /** read since the clock hand last passed: gets a second chance */
  used: boolean
  /** the cache's generation when stored: older than the current one, it is only a fallback (`stale`) */
  generation: number
  /** its place on the clock */
  slot: number
}

export class RedirectCache {
  readonly #entries = new Map<string, Entry>()
  /**
   * The clock: each entry's code in a slot of its own, and the hand going round them. Not the
   * Map's order: a Map's deleted keys stay as holes until it is rebuilt, and finding its first key
   * walks them, which made each eviction cost more the larger the cache (20 µs a miss at 8 MiB).
   */
  #ring: Array<string | undefined> = []
  /** slots of removed entries, taken again first */
  #free: number[] = []
  #hand = 0
  #bytes = 0
  #evictions = 0
  /** counts the writes (invalidate, clear, resume): a read takes it before it asks the database */
  #epoch = 0
  /**
   * The codes written lately, by the epoch of their write, in two generations (`#changed` the
   * newer) of at most RECENT_WRITES codes: a fill is refused when its own code was written after
   * its read began, not when any code was (a link created anywhere kept every cold read out of
   * the cache). A fill begun before `#floor` is refused whatever its code: the writes it would
   * need to be checked against are forgotten, or were a clear.
   */
  #changed = new Map<string, number>()
  #changedBefore = new Map<string, number>()
  /** the epoch when `#changed` began */
  #changedSince = 0
  #floor = 0
  #enabled = true
  #generation = 0
  #holdTimer: NodeJS.Timeout | undefined

  constructor(
    readonly maxBytes: number,
    readonly negativeMs: number,
    readonly now: () => number = () => performance.now(),
    readonly wallNow: () => number = Date.now,
  ) {}

  get size(): number {
    return this.#entries.size
  }

  get bytes(): number {
    return this.#bytes
  }

  /** entries dropped to stay within the budget, since start */
  get evictions(): number {
    return this.#evictions
  }

  /** Take this before reading the database; pass it to `set` after. */
  get epoch(): number {
    return this.#epoch
  }

  get(code: string): Answer | undefined {
    const entry = this.#entries.get(code)
    if (entry === undefined || entry.generation !== this.#generation) return undefined
    return this.#answer(code, entry)
  }

  /**
   * What a code had before the change feed came back (see `resume`), for when the read that
   * should replace it fails: undefined when there is none (or it is fresh, so `get` has it).
   */
  stale(code: string): Answer | undefined {
    const entry = this.#entries.get(code)
    if (entry === undefined || entry.generation === this.#generation) return undefined
    return this.#answer(code, entry)
  }

  #answer(code: string, entry: Entry): Answer | undefined {
    const location = entry.location
    if (location !== null) {
      entry.used = true
      const stop = stopOf(location === DISABLED, location === EXHAUSTED, entry.expiresAt, entry.startsAt, this.wallNow)
      return stop === undefined ? location : stop
    }
    if (entry.until > this.now()) return MISSING
    this.#remove(code)
    return undefined
  }

  /**
   * Stores what the database said (a Location, plain or Guarded, DISABLED, EXHAUSTED or undefined,
   * and the link's expiry and start), unless its code was written, or the cache cleared, since `epoch`.
   */
  set(code: string, location: Stored | undefined, epoch: number, expiresAt: number = NO_EXPIRY, startsAt: number = NO_START): void {
    if (!this.#enabled || (epoch !== this.#epoch && this.#writtenSince(code, epoch))) return
    if (location === undefined && this.negativeMs === 0) return
    const cost = costOf(location ?? null)
    if (cost > this.maxBytes) return
    this.#remove(code)
    while (this.#bytes + cost > this.maxBytes) this.#evictOne()
    const until = location === undefined ? this.now() + this.negativeMs : 0
    const slot = this.#free.pop() ?? this.#ring.length
    this.#ring[slot] = code
    this.#entries.set(code, { location: location ?? null, until, expiresAt, startsAt, used: false, generation: this.#generation, slot })
    this.#bytes += cost
  }

  /**
   * A capped link's cap was found used up: kept as EXHAUSTED with the link's times (so it still
   * expires in the one order), unless its code was written since `epoch` or the entry is gone.
   */
  exhaust(code: string, epoch: number): void {
    const entry = this.#entries.get(code)
    if (entry === undefined || entry.location === null || entry.generation !== this.#generation) return
    this.set(code, EXHAUSTED, epoch, entry.expiresAt, entry.startsAt)
  }

  invalidate(code: string): void {
    if (this.#changed.size >= RECENT_WRITES) {
      this.#floor = Math.max(this.#floor, this.#changedSince)
      this.#changedBefore = this.#changed
      this.#changed = new Map()
      this.#changedSince = this.#epoch
    }
    this.#changed.set(code, ++this.#epoch)
    this.#remove(code)
  }

  /** Whether a fill of `code` read at `epoch` may be stale: its code was written since, or a clear came. */
  #writtenSince(code: string, epoch: number): boolean {
    if (epoch < this.#floor) return true
    return (this.#changed.get(code) ?? this.#changedBefore.get(code) ?? 0) > epoch
  }

  clear(): void {
    this.#floor = ++this.#epoch
    this.#entries.clear()
    this.#ring = []
    this.#free = []
    this.#hand = 0
    this.#bytes = 0
  }

  /** While disabled nothing is stored, so nothing can go stale. Enabling starts from empty. */
  setEnabled(enabled: boolean): void {
    clearTimeout(this.#holdTimer)
    this.#holdTimer = undefined
    this.#enabled = enabled
    this.clear()
  }

  /**
   * The change feed is back after a loss: store again. What was held is not answered from any
   * longer (a change may have been missed), but kept as the fallback of a read that fails
   * (`stale`), until a read replaces it, and for no longer than the hold's bound (CACHE_STALE_MS
   * since the loss). Without a hold in effect, as setEnabled(true): from empty.
   */
  resume(): void {
    if (this.#enabled || this.#holdTimer === undefined) return this.setEnabled(true)
    this.#enabled = true
    this.#floor = ++this.#epoch
    this.#generation++
  }

  /**
   * The change feed is down: store nothing new, but keep answering from what is here for up to
   * `ms` (CACHE_STALE_MS), so hot codes still redirect while the database is away. When the feed
   * is back (`resume`), they are only a fallback for reads that fail; past the bound they are
   * gone: no change missed meanwhile is served any longer. 0 clears at once.
   */
  hold(ms: number): void {
    if (!this.#enabled) return // already holding, or off: the first loss sets the bound
    this.#enabled = false
    if (ms === 0) return this.clear()
    if (this.#holdTimer !== undefined) return // a loss again after a resume: the first loss's bound holds
    this.#holdTimer = setTimeout(() => {
      this.#holdTimer = undefined
      // Back and listening by then: what was read since is fresh, only the held entries go.
      if (this.#enabled) this.#dropStale()
      else this.clear()
    }, ms).unref()
  }

  #dropStale(): void {
    for (const [code, entry] of this.#entries) if (entry.generation !== this.#generation) this.#remove(code)
  }

  /** The hand goes round: a used entry is passed (and unmarked), the first unused one goes. */
  #evictOne(): void {
    for (;;) {
      if (this.#hand >= this.#ring.length) this.#hand = 0
      const code = this.#ring[this.#hand++]
      if (code === undefined) continue
      const entry = this.#entries.get(code)!
      if (!entry.used) {
        this.#remove(code)
        this.#evictions++
        return
      }
      entry.used = false
    }
  }

  #remove(code: string): void {
    const entry = this.#entries.get(code)
    if (entry === undefined) return
    this.#entries.delete(code)
    this.#ring[entry.slot] = undefined
    this.#free.push(entry.slot)
    this.#bytes -= costOf(entry.location)
  }
}

function costOf(location: Stored | null): number {
  if (typeof location === 'string') return entryBytes(location)
  if (!(location instanceof Guarded)) return MISSING_ENTRY_BYTES
  const card = location.card
  const cardBytes = card === undefined ? 0 : GUARDED_BYTES + (card.title?.length ?? 0) + (card.description?.length ?? 0) + (card.imageUrl?.length ?? 0)
  let ruleBytes = 0
  for (const rule of location.rules ?? []) ruleBytes += RULE_BYTES + rule.location.length + (rule.if.language?.length ?? 0)
  let variantBytes = 0
  for (const variant of location.experiment?.locations ?? []) variantBytes += RULE_BYTES + variant.length
  return entryBytes(location.location) + GUARDED_BYTES + cardBytes + ruleBytes + variantBytes
}

const RULE_BYTES = 64 // a rule's object, its condition's and their slots, roughly

const GUARDED_BYTES = 24 // the Guarded object

/** What an entry for this Location counts against CACHE_MAX_BYTES (the bench sizes its sets by it). */
export const entryBytes = (location: string): number => ENTRY_OVERHEAD_BYTES + location.length
