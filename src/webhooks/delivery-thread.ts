// The webhook deliverer on a thread of its own (deliveries.ts starts it): with its own small pool
// to the database, it claims, signs, sends and records without touching the event loop that
// answers redirects. The parent passes on the change feed's notices ('wake'); its log lines go to
// the service's logger through the parent port.
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import type { WebhookConfig } from '../config.js'
import { openDatabase } from '../db/open.js'
import { plainFields, type Logger, type LogFields } from '../log.js'
import { WebhookDeliverer } from './deliverer.js'

export interface ThreadData {
  databaseUrl: string
  dbTimeoutMs: number
  prepare: boolean
  config: WebhookConfig
  baseUrl: string
}

/** What the thread tells its parent: a line for the service's logger. */
export interface LogMessage {
  level: 'debug' | 'info' | 'warn' | 'error'
  msg: string
  fields?: LogFields
}

/**
 * Deliveries are background work: on a machine whose cores are all busy, the scheduler serves the
 * redirects' thread first (CFS weights: nice 0 is 1024, nice 10 is 110), and this thread still
 * runs, slower, until the peak is over. Linux keeps a nice value per thread; lowering it needs
 * no privilege. Where it is refused, deliveries run at the service's own priority.
 */
const NICE = 10
/** A claim and a record may overlap; the retention sweep and the expiry job are rare. */
const POOL_MAX = 2

try {
  setPriority(0, NICE) // 0: this thread, on Linux
} catch {
  /* not allowed here: the service's priority */
}
const port = parentPort!
const data = workerData as ThreadData
const forward = (level: LogMessage['level']) => (msg: string, fields?: LogFields) => port.postMessage({ level, msg, fields: plainFields(fields) } satisfies LogMessage)
const log: Logger = { writesAccess: false, access: () => {}, debug: forward('debug'), info: forward('info'), warn: forward('warn'), error: forward('error'), flush: () => {} }

const db = await openDatabase(data.databaseUrl, '', data.dbTimeoutMs, () => log.warn('webhook database pool stopped answering while the database answers; replaced it'), data.prepare, {
  max: POOL_MAX,
  name: 'link-service-webhooks',
})
const deliverer = new WebhookDeliverer(db.sql, log, data.config, () => data.baseUrl)
port.on('message', (m: unknown) => {
  if (m === 'wake') return deliverer.wake()
  if (m !== 'stop') return
  void (async () => {
    await deliverer.stop()
    await db.close(1).catch(() => {})
    process.exit(0)
  })()
})
deliverer.start(data.config.pollMs)
