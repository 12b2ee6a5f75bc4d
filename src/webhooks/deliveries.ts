// Where a node's webhook deliveries run. On PostgreSQL, on a thread of their own
// (delivery-thread.ts) with its own pool: signing, the HTTP client and the claim and record
// statements took about 0.4 ms of the main thread a delivery, and at 250 deliveries a second that
// came out of the redirects' throughput (docs/decisions.md). The thread runs only while the
// database holds a webhook: its engine and pool cost about 14 MB, which a service nobody
// subscribes to does not pay (the idle target of docs/performance.md). This thread looks every
// poll, and the change feed's notice of queued deliveries (`wake`) starts it at once; a thread
// that ends unasked is started again. While none runs, the link.expired job runs here, so that an
// expiry is marked when it passes and a webhook made later is not told of it.
// On the embedded database every statement runs in this thread's engine anyway, through its one
// connection: the deliverer stays here.
import { Worker } from 'node:worker_threads'
import type { WebhookConfig } from '../config.js'
import type { Database } from '../db/types.js'
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

/** Not awaited: nothing needs the thread before the service serves (its first claim finds what was queued meanwhile). */
export function startDeliveries(db: Database, log: Logger, config: Readonly<WebhookConfig>, baseUrl: string, dbTimeoutMs: number, prepare: boolean): Deliveries {
  if (db.url === undefined) {
    const deliverer = new WebhookDeliverer(db.sql, log, config, () => baseUrl)
    deliverer.start(Math.min(config.pollMs, EMBEDDED_POLL_MS))
    return { thread: undefined, wake: () => deliverer.wake(), stop: () => deliverer.stop() }
  }
  const data: ThreadData = { databaseUrl: db.url, dbTimeoutMs, prepare, config, baseUrl }
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
  /** said once, until a look succeeds again: a database that is away is not a warning every poll */
  let failing = false
  const look = async () => {
    try {
      if (!running()) await announceExpired(db.sql)
      const needed = await anyWebhooks(db.sql)
      if (stopping) return
      const now = performance.now()
      if (needed) lastNeeded = now
      if (needed && !running()) spawn()
      else if (!needed && thread !== undefined && now - lastNeeded >= config.threadIdleMs) {
        log.info('no webhooks: the delivery thread stops', { idle_ms: config.threadIdleMs })
        void end(thread)
      }
      failing = false
    } catch (err) {
      if (!failing && !stopping) log.warn('looking for webhook work failed; retrying every poll', { err })
      failing = true
    }
  }
  /** one look at a time: a slow database does not pile them up */
  let looking: Promise<void> | undefined
  const lookNow = () => void (looking ??= look().finally(() => (looking = undefined)))
  lookNow()
  const poll = setInterval(lookNow, config.pollMs).unref()
  return {
    get thread() {
      return thread
    },
    wake() {
      if (stopping) return
      lastNeeded = performance.now()
      if (thread === undefined && restart === undefined) spawn() // deliveries were queued: a webhook exists
      else thread?.postMessage('wake')
    },
    async stop() {
      stopping = true
      clearInterval(poll)
      clearTimeout(restart)
      // A look under way starts nothing now (stopping); a silent database does not hold the stop.
      if (thread !== undefined) void end(thread)
      await Promise.all([...ending].map((worker) => new Promise((resolve) => worker.once('exit', resolve))))
    },
  }
}
