// Which claimed delivery a node starts next, so that no account, and no endpoint, holds the
// slots that every account's deliveries share: one account never holds the last `reserved` slots
// (they are kept for the others, who would otherwise wait for its slowest endpoint's timeout), and
// among what waits, the delivery whose account, then endpoint, has the fewest under way goes first.
import type { ClaimSkips } from './queries.js'

interface Endpoint {
  /** when each delivery under way to it started (performance.now()) */
  starts: number[]
  /** its last attempt got no answer within SLOW_MS (a timeout, a connection that never came) */
  stalled: boolean
}

/** What `pick` and `skips` need of a claimed delivery. */
interface Claim {
  webhook_id: string
  user_id: string
}

export class FairShares {
  /** A delivery under way this long without an answer makes its endpoint stalled. */
  static readonly SLOW_MS = 2_000

  readonly #endpoints = new Map<string, Endpoint>()
  readonly #accounts = new Map<string, number>()
  /** slots one account may not take while another's delivery waits */
  readonly reserved: number

  constructor(readonly slots: number) {
    this.reserved = slots > 1 ? Math.max(1, Math.floor(slots / 4)) : 0
  }

  /** A stalled endpoint, or one with a delivery under way for SLOW_MS, has one slot, not more. */
  #mayStart(webhookId: string, now: number): boolean {
    const e = this.#endpoints.get(webhookId)
    if (e === undefined || e.starts.length === 0) return true
    return !e.stalled && !e.starts.some((t) => now - t >= FairShares.SLOW_MS)
  }

  /** Whether some endpoint is stalled now (its slot is held, not working). */
  anyStalled(now: number): boolean {
    for (const [id, e] of this.#endpoints) if (e.starts.length > 0 && !this.#mayStart(id, now)) return true
    return false
  }

  /** Deliveries one account may have under way at once. */
  get perAccount(): number {
    return this.slots - this.reserved
  }

  /**
   * The index in `queue` (oldest first) to start next, or -1 when none may: fewest under way for
   * its account, then for its endpoint, then the oldest.
   */
  pick(queue: readonly Claim[], now: number): number {
    let best = -1
    let bestKey = Infinity
    for (let i = 0; i < queue.length; i++) {
      const c = queue[i]!
      const account = this.#accounts.get(c.user_id) ?? 0
      if (account >= this.perAccount || !this.#mayStart(c.webhook_id, now)) continue
      const key = account * 1_000_000 + (this.#endpoints.get(c.webhook_id)?.starts.length ?? 0) * 1_000 + Math.min(i, 999)
      if (key < bestKey) {
        best = i
        bestKey = key
      }
    }
    return best
  }

  /** What a claim should pass over: endpoints that may not start now, accounts at their share. */
  skips(now: number, queued: readonly Claim[]): ClaimSkips {
    const webhooks = [...this.#endpoints.keys()].filter((id) => !this.#mayStart(id, now))
    const held = new Map(this.#accounts)
    for (const c of queued) held.set(c.user_id, (held.get(c.user_id) ?? 0) + 1)
    const accounts = [...held].filter(([, n]) => n >= this.perAccount).map(([id]) => id)
    return { webhooks, accounts }
  }

  /** A delivery starts; returns its start time, for `ended`. */
  started(c: Claim, now: number): number {
    let e = this.#endpoints.get(c.webhook_id)
    if (e === undefined) this.#endpoints.set(c.webhook_id, (e = { starts: [], stalled: false }))
    e.starts.push(now)
    this.#accounts.set(c.user_id, (this.#accounts.get(c.user_id) ?? 0) + 1)
    return now
  }

  /** A delivery ended: `answered` whether its endpoint answered at all (or it failed at once). */
  ended(c: Claim, startedAt: number, answered: boolean, now = performance.now()): void {
    const e = this.#endpoints.get(c.webhook_id)
    if (e !== undefined) {
      e.starts.splice(e.starts.indexOf(startedAt), 1)
      e.stalled = !answered && now - startedAt >= FairShares.SLOW_MS
      if (e.starts.length === 0 && !e.stalled) this.#endpoints.delete(c.webhook_id)
    }
    const n = (this.#accounts.get(c.user_id) ?? 1) - 1
    if (n <= 0) this.#accounts.delete(c.user_id)
    else this.#accounts.set(c.user_id, n)
  }
}
