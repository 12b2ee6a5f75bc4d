// Where a node's webhook deliveries run. On PostgreSQL, on a thread of their own
// (delivery-thread.ts) with its own pool: signing, the HTTP client and the claim and record
// statements took about 0.4 ms of the main thread a delivery, and at 250 deliveries a second that
// came out of the redirects' throughput (docs/decisions.md). The thread runs only while the
// database holds a webhook: its engine and pool cost about 14 MB, which a service nobody
// subscribes to does not pay (the idle target of docs/performance.md). This thread looks every
// poll, and the change feed's notice of queued deliveries (`wake`) starts it at once; a thread
// that ends unasked is started again.
// On the embedded database every statement runs in this thread's engine anyway, through its one
// connection: the deliverer stays here.
// The link.expired job runs here, at each poll, on both databases and whether or not anything
// delivers: an expiry is marked when it passes, so a webhook made later is not told of it.
import { Worker } from 'node:worker_threads'
import type { WebhookConfig } from '../config.js'
import type { Database, Sql } from '../db/types.js'
import type { Logger } from '../log.js'
import { WebhookDeliverer } from './deliverer.js'
import type { LogMessage, ThreadData } from './delivery-thread.js'
import { announceExpired, anyWebhooks } from './queries.js'

const THREAD_URL = new URL('./delivery-thread.js', import.meta.url)
/** The wait before a thread that ended is started again */
const RESTART_MS = 1_000
/** How long a stop waits for the thread to give back its claims and close its pool */
const STOP_MS = 3_000
/** The embedded database has no LISTEN for a notice to wake the deliverer: it looks this often. */
const EMBEDDED_POLL_MS = 1_000

export interface Deliveries {
  /** the delivery thread, while one runs (on PostgreSQL, while the database holds a webhook) */
  readonly thread: Worker | undefined
  /** deliveries were queued (a NOTIFY): look for them now */
  wake(): void
  stop(): Promise<void>
}

/** Where the deliverer runs, and what each poll does for it after the link.expired job. */
interface Deliverer extends Deliveries {
  polled(): Promise<void>
}

/** Not awaited: nothing needs the thread before the service serves (its first claim finds what was queued meanwhile). */
export function startDeliveries(db: Database, log: Logger, config: Readonly<WebhookConfig>, baseUrl: string, dbTimeoutMs: number, prepare: boolean): Deliveries {
  const pollMs = db.url === undefined ? Math.min(config.pollMs, EMBEDDED_POLL_MS) : config.pollMs
  const deliverer =
    db.url === undefined
      ? onThisThread(db.sql, log, config, baseUrl, pollMs)
      : onItsOwnThread(db.sql, log, config, { databaseUrl: db.url, dbTimeoutMs, prepare, config, baseUrl })
  let stopping = false
  /** said once, until a poll succeeds again: a database that is away is not a warning every poll */
  let failing = false
  const poll = async () => {
    try {
      await announceExpired(db.sql)
      if (stopping) return
      await deliverer.polled()
      failing = false
    } catch (err) {
      if (!failing && !stopping) log.warn('the webhook poll failed (the link.expired job, or looking for webhooks); retrying every poll', { err })
      failing = true
    }
  }
  /** one poll at a time: a slow database does not pile them up */
  let polling: Promise<void> | undefined
  const pollNow = () => void (polling ??= poll().finally(() => (polling = undefined)))
  pollNow()
  const timer = setInterval(pollNow, pollMs).unref()
  return {
    get thread() {
      return deliverer.thread
    },
    wake: () => deliverer.wake(),
    async stop() {
      stopping = true
      clearInterval(timer)
      // A poll under way starts nothing now; a silent database does not hold the stop.
      await deliverer.stop()
    },
  }
}

/** The embedded database: the deliverer on this thread, woken after each poll's link.expired job. */
function onThisThread(sql: Sql, log: Logger, config: Readonly<WebhookConfig>, baseUrl: string, pollMs: number): Deliverer {
  const deliverer = new WebhookDeliverer(sql, log, config, () => baseUrl)
  deliverer.start(pollMs)
  return {
    thread: undefined,
    wake: () => deliverer.wake(),
    polled: async () => deliverer.wake(),
    stop: () => deliverer.stop(),
  }
}

/** PostgreSQL: a thread that delivers while the database holds a webhook (a notice of queued deliveries starts it at once). */
function onItsOwnThread(sql: Sql, log: Logger, config: Readonly<WebhookConfig>, data: ThreadData): Deliverer {
  /** the thread that delivers; threads told to stop, until they have */
  let thread: Worker | undefined
  const ending = new Set<Worker>()
  let stopping = false
  let restart: NodeJS.Timeout | undefined
  /** when the database last held a webhook (or a notice said so) */
  let lastNeeded = 0

  const spawn = () => {
    restart = undefined
    const worker = new Worker(THREAD_URL, { workerData: data })
    worker.unref()
    thread = worker
    lastNeeded = performance.now()
    worker.on('message', (m: LogMessage) => log[m.level](m.msg, m.fields))
    worker.on('error', (err) => log.error('webhook delivery thread failed', { err }))
    worker.on('exit', (code) => {
      if (thread === worker) thread = undefined
      if (ending.delete(worker) || stopping) return
      // Claims it held are sent again once their leases run out (at least once).
      log.warn('webhook delivery thread ended; starting it again', { code })
      restart = setTimeout(spawn, RESTART_MS).unref()
    })
  }
  /** Asks the thread to give back its claims and close its pool; terminates it if it has not within STOP_MS. */
  const end = async (worker: Worker) => {
    ending.add(worker)
    if (thread === worker) thread = undefined
    const ended = new Promise((resolve) => worker.once('exit', resolve))
    worker.postMessage('stop')
    const late = setTimeout(() => void worker.terminate(), STOP_MS)
    await ended
    clearTimeout(late)
  }
  const running = () => thread !== undefined || restart !== undefined
  return {
    get thread() {
      return thread
    },
    wake() {
      if (stopping) return
      lastNeeded = performance.now()
      if (!running()) spawn() // deliveries were queued: a webhook exists
      else thread?.postMessage('wake')
    },
    async polled() {
      const needed = await anyWebhooks(sql)
      if (stopping) return
      const now = performance.now()
      if (needed) lastNeeded = now
      if (needed && !running()) spawn()
      else if (!needed && thread !== undefined && now - lastNeeded >= config.threadIdleMs) {
        log.info('no webhooks: the delivery thread stops', { idle_ms: config.threadIdleMs })
        void end(thread)
      }
    },
    async stop() {
      stopping = true
      clearTimeout(restart)
      if (thread !== undefined) void end(thread)
      await Promise.all([...ending].map((worker) => new Promise((resolve) => worker.once('exit', resolve))))
    },
  }
}
