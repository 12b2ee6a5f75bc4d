// The password KDF's worker threads, and the fair line in front of them. A hash takes a core for
// about a quarter of a second, so a burst of logins waits its turn here, served fairly across
// client addresses and accounts; an address that passed a check lately before addresses never
// seen, and one whose checks failed or were refused lately, or that asks again while a check of its
// own waits, after all others (fair-queue.ts, recent-clients.ts). The line is long enough for any plausible burst;
// it refuses (503 with Retry-After) only a request still waiting after MAX_WAIT_MS, one that
// clearly would (its expected wait half as long again), or one past MAX_WAITING: then the one
// served last goes, the newest of whoever has queued most. A request whose client hangs up leaves
// the line at once. The threads start on first use and stop after KDF_IDLE_MS without a hash:
// each holds a V8 isolate and the memory of its last hash (ARGON2_MEMORY_KIB), which an idle
// service has no use for; the first hash after that pays a thread's start (docs/decisions.md).
import { Worker } from 'node:worker_threads'
import { ClientGone } from '../http/body.js'
import { kdfBusy } from '../http/errors.js'
import type { KdfJob } from './derive.js'
import { FAILURE_MEMORY_MS, RecentClients, SUCCESS_MEMORY_MS } from './recent-clients.js'
import { LaneQueue, type Keys, type Standing } from './fair-queue.js'

/** Hundreds: a burst of 60 logins is a fraction of it. */
export const MAX_WAITING = 512
/** Within the 30 s a client is given: the wait, then the hash itself and the database. */
export const MAX_WAIT_MS = 25_000
/** A quiet minute: a burst of logins keeps its threads, a service left alone gives them back. */
export const IDLE_MS = 60_000
/** The expected wait is an estimate (at the pace of recent hashes, maybe from a busier moment):
 *  a request is refused at once only when it clearly could not make it. */
const HOPELESS = 1.5

export interface KdfResult {
  key: Buffer
  /** how long the derivation itself took on its thread, without the wait */
  ms: number
}

/** Whom a derivation is for: its fairness keys, and a way to learn that its client has gone. */
export interface Claim {
  keys: Keys
  /** calls `leave` once the client is gone (at once if it already is); returns an unsubscribe */
  whenGone?: (leave: () => void) => () => void
}

interface Job {
  job: KdfJob
  claim: Claim
  resolve: (result: KdfResult) => void
  reject: (err: unknown) => void
  timer?: NodeJS.Timeout
  unsubscribe?: () => void
}

interface Slot {
  worker: Worker
  id: number
  busy: Job | undefined
}

interface Reply {
  id: number
  key?: Uint8Array
  ms?: number
  error?: string
}

const WORKER_URL = new URL('./kdf-worker.js', import.meta.url)
const EWMA = 0.2
/** Stored hashes of many different costs (a strange database) must not grow the table of averages. */
const MAX_COSTS = 64

/** What a derivation costs depends on these alone: equal keys, equal work. */
export function costKey(job: KdfJob): string {
  return job.alg === 'argon2id' ? `argon2id m=${job.memoryKiB} t=${job.iterations}` : `scrypt log2N=${job.log2N}`
}

export class KdfPool {
  readonly #queue = new LaneQueue<Job>()
  readonly #failing = new RecentClients(FAILURE_MEMORY_MS)
  readonly #trusted = new RecentClients(SUCCESS_MEMORY_MS)
  readonly #slots: Slot[] = []
  /** recent derivation times by costKey, as moving averages */
  readonly #costs = new Map<string, number>()
  #averageMs = 0
  #nextId = 0
  #closed = false
  #idleTimer: NodeJS.Timeout | undefined

  constructor(
    readonly threads: number,
    readonly maxWaiting = MAX_WAITING,
    readonly maxWaitMs = MAX_WAIT_MS,
    readonly idleMs = IDLE_MS,
  ) {}

  /** Threads alive now: none until the first hash, and none again after idleMs without one. */
  get alive(): number {
    return this.#slots.length
  }

  get waiting(): number {
    return this.#queue.size
  }

  get running(): number {
    return this.#slots.filter((s) => s.busy !== undefined).length
  }

  /** The usual time of a derivation of this cost, once one has run. */
  typicalMs(cost: string): number | undefined {
    return this.#costs.get(cost)
  }

  run(job: KdfJob, claim: Claim): Promise<KdfResult> {
    return new Promise<KdfResult>((resolve, reject) => {
      if (this.#closed) return reject(new ClientGone())
      const entry: Job = { job, claim, resolve, reject }
      const free = this.#slots.find((s) => s.busy === undefined) ?? (this.#slots.length < this.threads ? this.#added() : undefined)
      if (free !== undefined && this.#queue.size === 0) return this.#start(free, entry)
      const client = claim.keys.client
      const ahead = this.#queue.push(claim.keys, entry, this.#standing(client))
      if (this.#queue.size > this.maxWaiting) {
        const last = this.#queue.last()!
        this.#queue.remove(last)
        this.#refuse(last)
        if (last === entry) return
      } else if (this.#expectedWaitMs(ahead) > this.maxWaitMs * HOPELESS) {
        this.#queue.remove(entry)
        return this.#refuse(entry)
      }
      entry.timer = setTimeout(() => {
        if (this.#queue.remove(entry)) this.#refuse(entry)
      }, this.maxWaitMs).unref()
      entry.unsubscribe = claim.whenGone?.(() => {
        if (!this.#queue.remove(entry)) return
        this.#settle(entry)
        reject(new ClientGone())
      })
    })
  }

  /** A check of this client failed: its checks go behind everyone else's for a while. */
  demote(client: string): void {
    this.#failing.note(client)
    this.#trusted.forget(client)
    this.#queue.demote(client)
  }

  /** A check of this client passed: its checks go ahead of those of clients never seen. */
  trust(client: string): void {
    this.#trusted.note(client)
  }

  #standing(client: string | undefined): Standing {
    if (client === undefined) return 'new'
    if (this.#failing.has(client)) return 'failing'
    return this.#trusted.has(client) ? 'trusted' : 'new'
  }

  /** Stops the threads; whatever still waits is dropped (its clients are gone by now). */
  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#idleTimer)
    for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift()) {
      this.#settle(next)
      next.reject(new ClientGone())
    }
    await Promise.all(
      this.#slots.map((slot) => {
        slot.busy?.reject(new ClientGone())
        slot.busy = undefined
        return slot.worker.terminate()
      }),
    )
  }

  /** Jobs ahead, spread over the threads, at the recent pace (the running ones count as one round). */
  #expectedWaitMs(ahead: number): number {
    return Math.ceil((ahead + 1) / this.threads) * this.#averageMs
  }

  /** A refused check counts as failed: its client was sending more than its share. */
  #refuse(entry: Job): void {
    this.#settle(entry)
    if (entry.claim.keys.client !== undefined) this.demote(entry.claim.keys.client)
    const seconds = Math.ceil(((this.#queue.size / this.threads) * this.#averageMs) / 1000)
    entry.reject(kdfBusy(Math.min(Math.max(seconds, 1), Math.ceil(this.maxWaitMs / 1000))))
  }

  /** The entry has left the line: no timer, no listener on its client. */
  #settle(entry: Job): void {
    clearTimeout(entry.timer)
    entry.unsubscribe?.()
  }

  /** A new thread, in the pool. */
  #added(): Slot {
    const slot = this.#spawn()
    this.#slots.push(slot)
    return slot
  }

  /** Every thread is idle: after idleMs without a hash they all stop (a new hash starts one again). */
  #whenIdle(): void {
    if (this.#slots.some((s) => s.busy !== undefined)) return
    clearTimeout(this.#idleTimer)
    this.#idleTimer = setTimeout(() => {
      // Out of the list first: their 'exit' is then no loss to replace (#lost).
      for (const slot of this.#slots.splice(0)) void slot.worker.terminate()
    }, this.idleMs).unref()
  }

  #spawn(): Slot {
    const slot: Slot = { worker: new Worker(WORKER_URL), id: 0, busy: undefined }
    slot.worker.unref()
    slot.worker.on('message', (reply: Reply) => this.#done(slot, reply))
    // A thread that dies (it should not: derive errors come back as messages) fails its job and is replaced.
    slot.worker.on('error', (err) => this.#lost(slot, err))
    slot.worker.on('exit', (code) => this.#lost(slot, new Error(`KDF worker exited with ${code}`)))
    return slot
  }

  #lost(slot: Slot, err: Error): void {
    const i = this.#slots.indexOf(slot)
    if (i === -1 || this.#closed) return
    const job = slot.busy
    slot.busy = undefined
    void slot.worker.terminate()
    const fresh = this.#spawn()
    this.#slots[i] = fresh
    job?.reject(err)
    this.#next(fresh)
  }

  #start(slot: Slot, entry: Job): void {
    clearTimeout(this.#idleTimer)
    slot.busy = entry
    slot.id = ++this.#nextId
    slot.worker.ref() // a derivation in flight keeps the process alive, as any pending I/O would
    slot.worker.postMessage({ id: slot.id, job: entry.job })
  }

  #done(slot: Slot, reply: Reply): void {
    const entry = slot.busy
    if (entry === undefined || reply.id !== slot.id) return
    slot.busy = undefined
    if (reply.error !== undefined) entry.reject(new Error(`KDF failed: ${reply.error}`))
    else {
      const ms = reply.ms!
      const cost = costKey(entry.job)
      const before = this.#costs.get(cost)
      if (before !== undefined || this.#costs.size < MAX_COSTS) this.#costs.set(cost, before === undefined ? ms : before + EWMA * (ms - before))
      this.#averageMs = this.#averageMs === 0 ? ms : this.#averageMs + EWMA * (ms - this.#averageMs)
      const key = reply.key!
      entry.resolve({ key: Buffer.from(key.buffer, key.byteOffset, key.byteLength), ms })
    }
    this.#next(slot)
  }

  #next(slot: Slot): void {
    const entry = this.#queue.shift()
    if (entry === undefined) {
      slot.worker.unref()
      this.#whenIdle()
      return
    }
    this.#settle(entry)
    this.#start(slot, entry)
  }
}
