// Waiting on the database with a bound: a connection that went silent (no reset, no refusal), a
// database that refuses us, or a driver that never settles a query would otherwise hold a
// request, a health check or a shutdown for as long as TCP keeps retrying.
import type { Circuit } from './db/circuit.js'
import { serviceUnavailable } from './http/errors.js'

/** How long a request waits while the circuit is open: enough for an answer that needs no database. */
const OPEN_CIRCUIT_MS = 50

/**
 * One request's budget of database time (DB_TIMEOUT_MS). `run` races the work against what is
 * left of it and answers 503 when it runs out; the work carries on unobserved (a write may still
 * commit: docs/decisions.md). Time the request spends on other things, such as its turn at the
 * password KDF, is not database time: `excluding` stops the clock while that runs. With a
 * `circuit`, each run tells it how the wait ended; a request that arrives while it is open gets
 * OPEN_CIRCUIT_MS per run (what is cached still answers), then 503; a write is refused before it
 * sends anything (app.ts).
 */
export class Deadline {
  /** `run`s in progress in this process: requests waiting on the database (a metric) */
  static waiting = 0
  #leftMs: number
  #since = 0
  #timer: NodeJS.Timeout | undefined
  #paused = 0
  /** this run's bound, below what is left: OPEN_CIRCUIT_MS while the circuit is open */
  #capMs = Infinity
  /** rejects the `run` in progress */
  #expire: ((err: unknown) => void) | undefined
  #admitted: boolean | undefined

  constructor(
    budgetMs: number,
    readonly circuit?: Circuit,
  ) {
    this.#leftMs = budgetMs
  }

  /**
   * Whether this request may ask the database, decided once at its first wait: a request let in
   * while the circuit was closed waits for what it sent (a write that was sent may commit, so it is
   * never answered early); one that came while it was open is not let in.
   */
  admitted(): boolean {
    return (this.#admitted ??= this.circuit === undefined || this.circuit.allows())
  }

  run<T>(work: T | Promise<T>): Promise<T> {
    Deadline.waiting++
    const circuit = this.circuit
    const counts = this.admitted()
    this.#capMs = counts ? Infinity : OPEN_CIRCUIT_MS
    return new Promise<T>((resolve, reject) => {
      this.#expire = (err: unknown) => {
        if (counts) circuit?.failed()
        reject(err)
      }
      this.#arm()
      Promise.resolve(work).then(
        (value) => {
          if (!this.#settle()) return
          if (counts) circuit?.succeeded()
          resolve(value)
        },
        (err: unknown) => {
          if (!this.#settle()) return
          if (counts) circuit?.settled(err)
          reject(err)
        },
      )
    }).finally(() => Deadline.waiting--)
  }

  async excluding<T>(work: Promise<T>): Promise<T> {
    this.#paused++
    this.#disarm()
    try {
      return await work
    } finally {
      this.#paused--
      this.#arm()
    }
  }

  #arm(): void {
    if (this.#expire === undefined || this.#paused > 0 || this.#timer !== undefined) return
    this.#since = performance.now()
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      this.#leftMs = 0
      const expire = this.#expire
      this.#expire = undefined
      expire?.(serviceUnavailable('the database did not answer in time; retry later'))
    }, Math.max(0, Math.min(this.#leftMs, this.#capMs)))
  }

  #disarm(): void {
    if (this.#timer === undefined) return
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#leftMs -= performance.now() - this.#since
  }

  /** False when the run already answered 503: its late outcome is dropped. */
  #settle(): boolean {
    if (this.#expire === undefined) return false
    this.#disarm()
    this.#expire = undefined
    return true
  }
}
