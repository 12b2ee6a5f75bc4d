// Where a node's webhook deliveries run. On PostgreSQL, on a thread of their own
// (delivery-thread.ts) with its own pool: signing, the HTTP client and the claim and record
// statements took about 0.4 ms of the main thread a delivery, and at 250 deliveries a second that
// came out of the redirects' throughput (docs/decisions.md). The change feed's notices of queued
// deliveries are passed on to it (`wake`); a thread that ends is started again.
// On the embedded database every statement runs in this thread's engine anyway, through its one
// connection: the deliverer stays here.
import { Worker } from 'node:worker_threads'
import type { WebhookConfig } from '../config.js'
import type { Database } from '../db/types.js'
import type { Logger } from '../log.js'
import { WebhookDeliverer } from './deliverer.js'
import type { LogMessage, ThreadData } from './delivery-thread.js'

const THREAD_URL = new URL('./delivery-thread.js', import.meta.url)
/** The wait before a thread that ended is started again */
const RESTART_MS = 1_000
/** How long a stop waits for the thread to give back its claims and close its pool */
const STOP_MS = 3_000
/** The embedded database has no LISTEN for a notice to wake the deliverer: it looks this often. */
const EMBEDDED_POLL_MS = 1_000

export interface Deliveries {
  /** the delivery thread, while one runs (on PostgreSQL) */
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
  let thread: Worker | undefined
  let stopping = false
  let restart: NodeJS.Timeout | undefined

  const spawn = () => {
    const worker = new Worker(THREAD_URL, { workerData: data })
    worker.unref()
    thread = worker
    worker.on('message', (m: LogMessage) => log[m.level](m.msg, m.fields))
    worker.on('error', (err) => log.error('webhook delivery thread failed', { err }))
    worker.on('exit', (code) => {
      if (thread === worker) thread = undefined
      if (stopping) return
      // Claims it held are sent again once their leases run out (at least once).
      log.warn('webhook delivery thread ended; starting it again', { code })
      restart = setTimeout(spawn, RESTART_MS).unref()
    })
  }
  spawn()
  return {
    get thread() {
      return thread
    },
    wake() {
      thread?.postMessage('wake')
    },
    async stop() {
      stopping = true
      clearTimeout(restart)
      const worker = thread
      if (worker === undefined) return
      const ended = new Promise((resolve) => worker.once('exit', resolve))
      worker.postMessage('stop')
      const late = setTimeout(() => void worker.terminate(), STOP_MS)
      await ended
      clearTimeout(late)
    },
  }
}
