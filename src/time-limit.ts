// Waiting on the database with a bound: a connection that went silent (no reset, no refusal), a
// database that refuses us, or a driver that never settles a query would otherwise hold a
// request, a health check or a shutdown for as long as TCP keeps retrying.
import { serviceUnavailable } from './http/errors.js'

/** 'late' when `work` has not settled within `ms` (it carries on; nobody waits for it). */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<'done' | 'late'> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)))
  try {
    return await Promise.race([work.then(() => 'done' as const), late])
  } finally {
    clearTimeout(timer)
  }
}

/** true when `work` fulfils within `ms`; false when it fails or is late (a health check's question). */
export const succeedsWithin = (work: Promise<unknown>, ms: number): Promise<boolean> =>
  settlesWithin(work, ms).then(
    (outcome) => outcome === 'done',
    () => false,
  )

/**
 * One request's budget of database time (DB_TIMEOUT_MS). `run` races the work against what is
 * left of it and answers 503 when it runs out; the work carries on unobserved (a write may still
 * commit: docs/decisions.md). Time the request spends on other things, such as its turn at the
 * password KDF, is not database time: `excluding` stops the clock while that runs.
 */
export class Deadline {
  /** `run`s in progress in this process: requests waiting on the database (a metric) */
  static waiting = 0
  #leftMs: number
  #since = 0
  #timer: NodeJS.Timeout | undefined
  #paused = 0
  /** rejects the `run` in progress */
  #expire: ((err: unknown) => void) | undefined

  constructor(budgetMs: number) {
    this.#leftMs = budgetMs
  }

  run<T>(work: T | Promise<T>): Promise<T> {
    Deadline.waiting++
    return new Promise<T>((resolve, reject) => {
      this.#expire = reject
      this.#arm()
      Promise.resolve(work).then(
        (value) => this.#settle() && resolve(value),
        (err: unknown) => this.#settle() && reject(err),
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
    }, Math.max(0, this.#leftMs))
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
