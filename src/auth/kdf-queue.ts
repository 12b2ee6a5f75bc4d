// The password KDF's admission control. A hash takes a core and 64 MiB for a good tenth of a
// second, so only a few run at once and the rest wait in line; the line itself is bounded in
// length and in time, so a flood of logins gets quick 503s instead of an ever-longer wait, and a
// request whose client has gone is dropped when its turn comes instead of hashed for nobody.
import { ClientGone } from '../http/body.js'
import { kdfBusy } from '../http/errors.js'

interface Waiter {
  start: () => void
  timer: NodeJS.Timeout
}

export class KdfQueue {
  #running = 0
  readonly #waiting: Waiter[] = []

  constructor(
    readonly slots: number,
    readonly maxWaiting: number,
    readonly maxWaitMs: number,
  ) {}

  /** How many wait for a slot now. */
  get waiting(): number {
    return this.#waiting.length
  }

  /** Runs `task` in a free slot, unless `wanted` says by then that nobody is waiting for it. */
  async run<T>(task: () => Promise<T>, wanted: () => boolean = () => true): Promise<T> {
    await this.#acquire()
    try {
      if (!wanted()) throw new ClientGone()
      return await task()
    } finally {
      this.#release()
    }
  }

  #acquire(): Promise<void> | void {
    if (this.#running < this.slots) {
      this.#running++
      return
    }
    if (this.#waiting.length >= this.maxWaiting) throw kdfBusy()
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer)
          resolve()
        },
        timer: setTimeout(() => {
          this.#waiting.splice(this.#waiting.indexOf(waiter), 1)
          reject(kdfBusy())
        }, this.maxWaitMs).unref(),
      }
      this.#waiting.push(waiter)
    })
  }

  /** Hands the slot straight to the next waiter, so nobody can slip in between. */
  #release(): void {
    const next = this.#waiting.shift()
    if (next === undefined) this.#running--
    else next.start()
  }
}
