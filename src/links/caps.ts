// The visit cap (max_visits) of the redirect path: a GET to a capped link takes one visit from the
// link's visits_left in the database before its 302, so the cap holds exactly across every node
// (the link_caps table). Takes are gathered into one statement, one statement at a time:
// those that arrive while one is out go in the next, so a busy capped link costs one commit per
// round trip, not one per visit. Links without a cap never come here.
import type { Circuit } from '../db/circuit.js'
import { serviceUnavailable } from '../http/errors.js'
import type { Sql } from '../db/types.js'
import { takeVisits } from './queries.js'

const MAX_BATCH = 500

type Waiter = { take: boolean; resolve: (allowed: boolean) => void; reject: (err: unknown) => void }

export class VisitCaps {
  #pending = new Map<string, Waiter[]>()
  #scheduled = false
  #sending = false

  constructor(
    readonly sql: Sql,
    readonly circuit?: Circuit,
  ) {}

  /**
   * Whether `code` may redirect: with `take` (a GET, a visit), one visit is taken from its cap and
   * true means it was; without (a HEAD), whether one is left. True too for a link that no longer
   * has a cap (the change feed is telling this node).
   */
  allow(code: string, take: boolean): Promise<boolean> {
    if (this.circuit !== undefined && !this.circuit.allows()) return Promise.reject(serviceUnavailable('the database is not answering; retry later'))
    return new Promise((resolve, reject) => {
      const waiters = this.#pending.get(code)
      if (waiters !== undefined) waiters.push({ take, resolve, reject })
      else this.#pending.set(code, [{ take, resolve, reject }])
      if (this.#sending) return // the statement out sends what waits when it is back
      if (this.#pending.size >= MAX_BATCH) this.#send()
      else if (!this.#scheduled) {
        this.#scheduled = true
        setImmediate(() => this.#send())
      }
    })
  }

  #send(): void {
    this.#scheduled = false
    if (this.#sending || this.#pending.size === 0) return
    this.#sending = true
    const batch = this.#pending
    this.#pending = new Map()
    const codes = [...batch.keys()]
    const counts = [...batch.values()].map((ws) => ws.reduce((n, w) => n + (w.take ? 1 : 0), 0))
    // Unlike a look-up, a take that failed is not sent again: it may have committed, and its
    // visits would be taken twice. Its requests fail (503) instead.
    takeVisits(this.sql, codes, counts)
      .then(
        (rows) => {
          this.circuit?.succeeded()
          const left = new Map(rows.map((r) => [r.code, r.before]))
          for (const [code, waiters] of batch) {
            const before = left.get(code) ?? null
            let taken = 0
            for (const w of waiters) w.resolve(before === null || (w.take ? taken++ < before : before > 0))
          }
        },
        (err: unknown) => {
          this.circuit?.settled(err)
          for (const waiters of batch.values()) for (const w of waiters) w.reject(err)
        },
      )
      .finally(() => {
        this.#sending = false
        this.#send()
      })
  }
}
