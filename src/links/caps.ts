// The visit cap (max_visits) of the redirect path. A GET to a capped link takes one visit from the
// link's visits_left in the database before its 302, so the cap holds exactly across every node
// (the link_caps table). A link visited often is taken from by blocks: about a second of its
// visits at a time (never more than a quarter of what is left), held by this node and answered
// from memory, with what was not used given back within half a second of the visits stopping
// (sql/0029_cap_holds.sql says how the other nodes wait for those rather than answer 410).
// Everything that needs the database goes in one statement at a time: what arrives while one is
// out goes in the next. Links without a cap never come here.
import { randomUUID } from 'node:crypto'
import type { Circuit } from '../db/circuit.js'
import { CAP_CHANNEL } from '../db/channels.js'
import { serviceUnavailable } from '../http/errors.js'
import type { Sql } from '../db/types.js'
import { takeCapVisits } from './queries.js'

const MAX_BATCH = 500
/** a link visited fewer times than this in a second takes a visit at a time */
const BLOCK_MIN_RATE = 4
const MAX_BLOCK = 1_000
/** a hold lasts this long in the database unless renewed (its node died: its visits are lost) */
const LEASE_MS = 3_000
/** a hold not used for this long, or older than MAX_HOLD_MS, is given back */
const IDLE_MS = 500
const MAX_HOLD_MS = 2_000
const SWEEP_MS = 250
/** a take refused while other nodes hold visits is sent again this often, until their holds end */
const WAIT_STEP_MS = 25
const MAX_WAIT_MS = LEASE_MS + 500

type Waiter = { take: boolean; since: number; resolve: (allowed: boolean) => void; reject: (err: unknown) => void }
type Hold = { left: number; since: number; used: number }

export class VisitCaps {
  #pending = new Map<string, Waiter[]>()
  /** codes whose hold is to be given back (or, used up, ended) in the next statement */
  #giveBack = new Set<string>()
  /** this node's blocks: visits taken from the database and not yet answered */
  readonly #holds = new Map<string, Hold>()
  /** visits per code in this second and the last one (the block size) */
  #rate = new Map<string, number>()
  #lastRate = new Map<string, number>()
  #rotatedAt = Date.now()
  #scheduled = false
  #sending: Promise<void> | undefined
  #sweep: NodeJS.Timeout | undefined
  /** statements sent: with blocks, far fewer than the visits they answer */
  statements = 0

  constructor(
    readonly sql: Sql,
    readonly circuit?: Circuit,
    /** names this node's holds; unique per process */
    readonly node: string = randomUUID(),
  ) {}

  start(): void {
    this.#sweep ??= setInterval(() => this.#tick(), SWEEP_MS).unref()
  }

  /** Gives back every hold (once nothing more is answered: at shutdown). */
  async stop(): Promise<void> {
    clearInterval(this.#sweep)
    for (const code of this.#holds.keys()) this.#giveBack.add(code)
    await this.#sending
    this.#send()
    await this.#sending
  }

  /**
   * Whether `code` may redirect: with `take` (a GET, a visit), one visit is taken from its cap and
   * true means it was; without (a HEAD), whether one is left. True too for a link that no longer
   * has a cap (the change feed is telling this node). True at once when this node's block answers.
   */
  allow(code: string, take: boolean): true | Promise<boolean> {
    const hold = this.#holds.get(code)
    if (hold !== undefined && hold.left > 0) {
      if (take) {
        hold.left--
        hold.used = Date.now()
        this.#rate.set(code, (this.#rate.get(code) ?? 0) + 1)
      }
      return true
    }
    if (this.circuit !== undefined && !this.circuit.allows()) return Promise.reject(serviceUnavailable('the database is not answering; retry later'))
    if (take) this.#rate.set(code, (this.#rate.get(code) ?? 0) + 1)
    return new Promise((resolve, reject) => this.#queue(code, { take, since: Date.now(), resolve, reject }))
  }

  /** Visits of `code` this node has taken and not yet answered: left to visit, as far as it knows. */
  held(code: string): number {
    return this.#holds.get(code)?.left ?? 0
  }

  /** The link changed, or another node waits for visits this one holds: its hold is given back. */
  release(code: string): void {
    if (!this.#holds.has(code)) return
    this.#giveBack.add(code)
    this.#schedule()
  }

  #queue(code: string, waiter: Waiter): void {
    const waiters = this.#pending.get(code)
    if (waiters !== undefined) waiters.push(waiter)
    else this.#pending.set(code, [waiter])
    if (this.#pending.size >= MAX_BATCH) this.#send()
    else this.#schedule()
  }

  #schedule(): void {
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(() => this.#send())
  }

  #tick(): void {
    const now = Date.now()
    if (now - this.#rotatedAt >= 1_000) {
      this.#lastRate = this.#rate
      this.#rate = new Map()
      this.#rotatedAt = now
    }
    for (const [code, hold] of this.#holds) {
      if (now - hold.used >= IDLE_MS || now - hold.since >= MAX_HOLD_MS) this.#giveBack.add(code)
    }
    if (this.#giveBack.size > 0) this.#schedule()
  }

  /** Requests that came while a block was being taken are answered from it. */
  #answerFromHolds(): void {
    for (const [code, waiters] of this.#pending) {
      const hold = this.#holds.get(code)
      if (hold === undefined || hold.left === 0) continue
      const rest = waiters.filter((w) => {
        if (hold.left === 0) return true
        if (w.take) hold.left--
        w.resolve(true)
        return false
      })
      if (rest.length > 0) this.#pending.set(code, rest)
      else this.#pending.delete(code)
    }
  }

  #send(): void {
    this.#scheduled = false
    if (this.#sending !== undefined) return
    this.#answerFromHolds()
    if (this.#pending.size === 0 && this.#giveBack.size === 0) return
    const batch = this.#pending
    this.#pending = new Map()
    const codes = [...new Set([...batch.keys(), ...this.#giveBack])]
    this.#giveBack.clear()
    const back = codes.map((code) => {
      const left = this.#holds.get(code)?.left ?? 0
      this.#holds.delete(code)
      return left
    })
    const need = codes.map((code) => batch.get(code)?.reduce((n, w) => n + (w.take ? 1 : 0), 0) ?? 0)
    // The block is the busier of the last second and this one so far: a link that turns busy
    // takes blocks from its fourth visit on (4, 8, 16...), whatever the second's phase.
    const want = codes.map((code, i) => {
      const rate = Math.max(this.#lastRate.get(code) ?? 0, this.#rate.get(code) ?? 0)
      return need[i]! > 0 && rate >= BLOCK_MIN_RATE ? Math.min(MAX_BLOCK, Math.max(need[i]!, rate)) : need[i]!
    })
    // Unlike a look-up, a take that failed is not sent again: it may have committed, and its
    // visits would be taken twice. Its requests fail (503) instead; visits given back in it may
    // be lost (the cap ends short, never over).
    this.statements++
    this.#sending = takeCapVisits(this.sql, this.node, codes, back, need, want, LEASE_MS, CAP_CHANNEL)
      .then(
        (rows) => {
          this.circuit?.succeeded()
          const now = Date.now()
          for (const row of rows) this.#settle(row, batch.get(row.code), now)
        },
        (err: unknown) => {
          this.circuit?.settled(err)
          for (const waiters of batch.values()) for (const w of waiters) w.reject(err)
        },
      )
      .finally(() => {
        this.#sending = undefined
        this.#send()
      })
  }

  /** One code's answer: its waiters served from what was taken, the rest kept as this node's hold. */
  #settle(row: { code: string; left: number | null; taken: number; others: number }, waiters: Waiter[] | undefined, now: number): void {
    if (waiters === undefined) return
    if (row.left === null) {
      for (const w of waiters) w.resolve(true)
      return
    }
    let taken = row.taken
    const waiting: Waiter[] = []
    for (const w of waiters) {
      if (!w.take) w.resolve(row.left > 0 || row.others > 0)
      else if (taken > 0) {
        taken--
        w.resolve(true)
      } else if (row.others > 0 && now - w.since < MAX_WAIT_MS) waiting.push(w)
      else w.resolve(false)
    }
    if (taken > 0) this.#holds.set(row.code, { left: taken, since: now, used: now })
    // Asked on CAP_CHANNEL, the holders give back what they hold; ask the database again shortly.
    if (waiting.length > 0) setTimeout(() => waiting.forEach((w) => this.#queue(row.code, w)), WAIT_STEP_MS)
  }
}
