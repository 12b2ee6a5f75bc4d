// The visit tally on a thread of its own (tally-worker.ts), for full statistics: the answering
// thread only appends each visit's strings to flat arrays and hands them on every SEND_EVERY
// visits; the fold (classifying, parsing the User-Agents' families, placing addresses in their
// countries, counting per link and day: the most of what full statistics cost a redirect) runs on
// the other thread, which opens the country database itself. A take brings the salts of the days
// recorded since the last, so the visitors come back hashed (sketch registers, no address). A
// flush takes the counts back in chunks of CHUNK_LINKS links, each asked for when the last is in,
// so that no message holds the event loop long. The thread keeps the batch it last gave until the
// next take: a failed flush puts it back there by a word (`putBack`), never by sending it again.
// Only when the thread is MAX_BEHIND messages or MAX_BEHIND_CHARS of header text behind (starved
// of CPU for seconds) does the next hand-over wait for it: what waits is bounded, as it was when
// the fold ran here. The thread starts with the first hand-over and stops after `idleMs` of
// flushes that found nothing (it is about 9 MB of memory): a service nobody visits does not carry it.
import type { BlockList } from 'node:net'
import { Worker } from 'node:worker_threads'
import { type LogFields, type Logger } from '../log.js'
import { appendVisit, DAY_MS, noVisits, type Pending, type RawVisits, type Taken, type Visitor } from './visit-tally.js'

/** Visits appended here before they are handed on: one message's serialisation per this many. */
const SEND_EVERY = 512
/** Messages handed on and not yet folded before a hand-over waits: 131,072 visits. */
const MAX_BEHIND = 256
/** The same in characters of User-Agents and Referers: a header may be 16 KiB, and a flood of long ones must not hold gigabytes. */
const MAX_BEHIND_CHARS = 16 * 1024 * 1024
const MAX_WAIT_MS = 1_000
/** How long flushes find nothing before the thread stops. */
export const TALLY_IDLE_MS = 60_000
/** Links per message of a taken batch (a few milliseconds of deserialising at most). */
export const CHUNK_LINKS = 100
const WORKER_URL = new URL('./tally-worker.js', import.meta.url)

/** What the tally thread is told. */
export type ToTally =
  | { kind: 'visits'; visits: RawVisits }
  /** `salts`: the visitors of these days (by day number) come hashed */
  | { kind: 'take'; salts: ReadonlyMap<number, string> | undefined }
  | { kind: 'more' }
  /** the batch the thread last gave goes back into what is pending; or `batch`, when another thread gave it */
  | { kind: 'back'; batch?: Map<string, Pending> }
/** What it answers a take with: chunks of the batch, asked for one at a time, then its end; and its warnings, to be logged. */
export type FromTally =
  | { kind: 'chunk'; entries: Array<[string, Pending]>; last: boolean; visitorsDropped: boolean }
  | { kind: 'warn'; msg: string; fields: LogFields | undefined }

/** What the thread is started with. */
export interface TallyData {
  trustProxy: BlockList | undefined
  geoDb: string | undefined
  /** the count of hand-overs folded, shared */
  folded: SharedArrayBuffer
}

export interface TallyThreadOptions {
  trustProxy: BlockList | undefined
  /** GEO_DB (geo.ts), opened on the thread: undefined for the bundled database */
  geoDb?: string
  /** told of the thread's warnings, and of its failure (the counts it held are lost; the next hand-over starts a fresh one) */
  log: Pick<Logger, 'warn' | 'error'>
  /** how long takes find nothing before the thread stops */
  idleMs?: number
}

function headerChars(raw: RawVisits): number {
  let n = 0
  for (let i = 0; i < raw.codes.length; i++) n += (raw.agents[i]?.length ?? 0) + (raw.referers[i]?.length ?? 0) + (raw.forwarded[i]?.length ?? 0)
  return n
}

/** The taking in progress: what has come in of the batch so far. */
interface Taking {
  batch: Map<string, Pending>
  visits: number
  /** hand-overs made before it was asked for: any after are not in it */
  sent: number
  resolve(taken: Taken): void
  reject(err: Error): void
}

export class TallyThread {
  readonly #trustProxy: BlockList | undefined
  readonly #geoDb: string | undefined
  readonly #log: TallyThreadOptions['log']
  readonly #idleMs: number
  #worker: Worker | undefined
  /** messages of visits handed on to the running thread, and (shared with it) folded */
  #sent = 0
  #folded = new Int32Array(new SharedArrayBuffer(4))
  /** the header characters of each message handed on and not yet seen folded, oldest first, and their sum */
  #sizes: number[] = []
  #behindChars = 0
  #seenFolded = 0
  #raw = noVisits()
  /** the days of the visits recorded since the last take, and the last one added */
  #days = new Set<number>()
  #lastDay = -1
  #waiting = 0
  #taking: Taking | undefined
  /** the thread that gave the last batch (it keeps a copy of it for `putBack`) */
  #gaveLast: Worker | undefined
  /** since when every take found nothing */
  #idleSince: number | undefined

  constructor({ trustProxy, geoDb, log, idleMs = TALLY_IDLE_MS }: TallyThreadOptions) {
    this.#trustProxy = trustProxy
    this.#geoDb = geoDb
    this.#log = log
    this.#idleMs = idleMs
  }

  /** Whether the thread is running (it starts with the first hand-over, and stops when idle). */
  get running(): boolean {
    return this.#worker !== undefined
  }

  #start(): Worker {
    const folded = new SharedArrayBuffer(4)
    this.#folded = new Int32Array(folded)
    this.#sent = this.#seenFolded = this.#behindChars = 0
    this.#sizes = []
    const worker = new Worker(WORKER_URL, { workerData: { trustProxy: this.#trustProxy, geoDb: this.#geoDb, folded } satisfies TallyData })
    worker.unref()
    worker.on('message', (m: FromTally) => this.#received(m))
    worker.once('error', (err) => {
      if (this.#worker !== worker) return
      this.#worker = undefined
      this.#waiting = this.#raw.codes.length
      this.#taking?.reject(err)
      this.#taking = undefined
      this.#log.error('visit tally thread failed; visits not yet flushed are lost', { err })
    })
    return (this.#worker = worker)
  }

  /** Visits recorded and not yet taken. */
  get waiting(): number {
    return this.#waiting
  }

  /** A visit at `atMs`. The hot path: appends, nothing else. */
  record(code: string, visitor: Visitor, atMs: number): void {
    appendVisit(this.#raw, code, visitor, atMs, true, this.#trustProxy)
    const day = Math.floor(atMs / DAY_MS)
    if (day !== this.#lastDay) this.#days.add((this.#lastDay = day))
    this.#waiting++
    if (this.#raw.codes.length >= SEND_EVERY) this.#send()
  }

  #send(): void {
    if (this.#raw.codes.length === 0) return
    const worker = this.#worker ?? this.#start()
    const chars = headerChars(this.#raw)
    // A thread that died meanwhile folds nothing more: the wait ends (its 'error' comes next).
    const until = performance.now() + MAX_WAIT_MS
    for (;;) {
      const folded = Atomics.load(this.#folded, 0)
      for (; this.#seenFolded < folded; this.#seenFolded++) this.#behindChars -= this.#sizes.shift()!
      if ((this.#sent - folded <= MAX_BEHIND && this.#behindChars + chars <= MAX_BEHIND_CHARS) || performance.now() >= until) break
      Atomics.wait(this.#folded, 0, folded, 10)
    }
    worker.postMessage({ kind: 'visits', visits: this.#raw } satisfies ToTally)
    this.#sent++
    this.#sizes.push(chars)
    this.#behindChars += chars
    this.#raw = noVisits()
  }

  /** The days of the visits recorded since the last take. */
  days(): Iterable<number> {
    return [...this.#days]
  }

  /**
   * Everything counted so far; the thread starts afresh. The visitors of the days in `salts` come
   * hashed, by the thread. One take at a time (flushes never overlap).
   */
  take(salts?: ReadonlyMap<number, string>): Promise<Taken> {
    if (this.#taking !== undefined) return Promise.reject(new Error('a take is already in progress'))
    this.#send()
    this.#days = new Set()
    this.#lastDay = -1
    const worker = this.#worker
    if (worker === undefined) return Promise.resolve({ batch: new Map(), visitorsDropped: false })
    return new Promise<Taken>((resolve, reject) => {
      this.#taking = { batch: new Map(), visits: 0, sent: this.#sent, resolve, reject }
      // Kept alive while it owes an answer; idle, it never holds the process open.
      worker.ref()
      worker.postMessage({ kind: 'take', salts } satisfies ToTally)
    })
  }

  #received(m: FromTally): void {
    if (m.kind === 'warn') return this.#log.warn(m.msg, m.fields)
    const taking = this.#taking
    const worker = this.#worker
    if (taking === undefined || worker === undefined) return
    for (const [code, p] of m.entries) {
      taking.batch.set(code, p)
      taking.visits += p.count
    }
    if (!m.last) return worker.postMessage({ kind: 'more' } satisfies ToTally)
    this.#taking = undefined
    this.#gaveLast = worker
    worker.unref()
    this.#waiting -= taking.visits
    taking.resolve({ batch: taking.batch, visitorsDropped: m.visitorsDropped })
    this.#stopWhenIdle(taking.batch.size === 0 && this.#sent === taking.sent && this.#raw.codes.length === 0)
  }

  /** After a take: the thread stops once takes have found nothing, and nothing came since, for idleMs. */
  #stopWhenIdle(empty: boolean): void {
    if (!empty) return void (this.#idleSince = undefined)
    const now = performance.now()
    this.#idleSince ??= now
    if (now - this.#idleSince < this.#idleMs) return
    this.#idleSince = undefined
    void this.close()
  }

  /** The batch last taken, surely not written: the thread merges its own copy of it back into what is pending. */
  putBack(batch: Map<string, Pending>): void {
    for (const p of batch.values()) this.#waiting += p.count
    // Sent whole only to a thread that does not hold it (the one that gave it failed since).
    const worker = this.#worker
    if (worker !== undefined && worker === this.#gaveLast) worker.postMessage({ kind: 'back' } satisfies ToTally)
    else (worker ?? this.#start()).postMessage({ kind: 'back', batch } satisfies ToTally)
  }

  /** Ends the thread; whatever it has not given is gone (a stop takes it first). */
  async close(): Promise<void> {
    const worker = this.#worker
    this.#worker = undefined
    await worker?.terminate()
  }
}
