// Sessions this node has checked lately, so an authenticated request needs no read of its own;
// how long they live and how revocation reaches them: docs/decisions.md, "Passwords and sessions".
import type { Session } from './sessions.js'

interface Entry {
  session: Session
  /** monotonic ms after which the entry is not used */
  until: number
}

export class SessionCache {
  readonly #entries = new Map<string, Entry>()
  readonly #byUser = new Map<string, Set<string>>()
  #epoch = 0
  #enabled = true

  constructor(
    /** SESSION_CACHE_MS; 0 caches nothing */
    readonly ttlMs: number,
    readonly maxEntries: number = 100_000,
    readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.#entries.size
  }

  /** Take this before reading the database; pass it to `set` after. */
  get epoch(): number {
    return this.#epoch
  }

  /** `key`: the token digest as a string (see keyOf). */
  get(key: string): Session | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (entry.until > this.now()) return entry.session
    this.#remove(key, entry)
    return undefined
  }

  /** Stores a session read from the database with `leftMs` to live, unless a revocation came since `epoch`. */
  set(key: string, session: Session, epoch: number, leftMs: number): void {
    if (!this.#enabled || this.ttlMs === 0 || epoch !== this.#epoch || leftMs <= 0) return
    if (this.#entries.size >= this.maxEntries) this.clear() // rare: a flood of distinct live tokens
    const old = this.#entries.get(key)
    if (old !== undefined) this.#remove(key, old)
    this.#entries.set(key, { session, until: this.now() + Math.min(this.ttlMs, leftMs) })
    let keys = this.#byUser.get(session.userId)
    if (keys === undefined) this.#byUser.set(session.userId, (keys = new Set()))
    keys.add(key)
  }

  /** Some session of this user ended (or its password changed): its cached sessions are read again. */
  forgetUser(userId: string): void {
    this.#epoch++
    const keys = this.#byUser.get(userId)
    if (keys === undefined) return
    this.#byUser.delete(userId)
    for (const key of keys) this.#entries.delete(key)
  }

  clear(): void {
    this.#epoch++
    this.#entries.clear()
    this.#byUser.clear()
  }

  /** Off while the change feed is down: a revocation on another node could not reach us. */
  setEnabled(enabled: boolean): void {
    this.#enabled = enabled
    this.clear()
  }

  #remove(key: string, entry: Entry): void {
    this.#entries.delete(key)
    const keys = this.#byUser.get(entry.session.userId)
    keys?.delete(key)
    if (keys?.size === 0) this.#byUser.delete(entry.session.userId)
  }
}

/** The cache key of a token digest: its bytes as a string, with no encoding work. */
export const keyOf = (tokenHash: Buffer): string => tokenHash.toString('latin1')
