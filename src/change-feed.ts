// Cross-node cache invalidation: LISTEN for changed links and ended sessions, and what the caches
// do while that connection is down (docs/decisions.md, "Surviving the database going away"). On
// the same connection, queued webhook deliveries: passed on to the delivery thread, which would
// otherwise need a connection of its own.
//
// The feed proves itself: it notifies itself through the main pool (the way every link write's
// notice travels) and counts itself up only while that notice comes back to its LISTEN
// connection. A pooler in transaction mode keeps LISTEN on no session and drops the notices
// (pgbouncer/pgbouncer#655); a connection that died without a reset, or a listener left on a
// former primary, gets none either. Each shows as a feed that is down, never as a silent one.
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import type { SessionCache } from './auth/session-cache.js'
import { CAP_CHANNEL, FEED_PROBE_CHANNEL, FLUSH_ALL, LINK_CHANNEL, SESSION_CHANNEL, WEBHOOK_CHANNEL } from './db/channels.js'
import type { Sql } from './db/types.js'
import type { RedirectCache } from './links/redirect-cache.js'
import type { Logger } from './log.js'
import { settlesWithin } from './settle.js'

/** A probe is sent this long after the last one came back. */
const PROBE_EVERY_MS = 2_000
/** A probe not back within this counts as a loss: a NOTIFY round trip takes milliseconds. */
const PROBE_WAIT_MS = 3_000
const MAX_BACKOFF_MS = 5_000

export class LinkChangeFeed {
  readonly #sql: postgres.Sql
  /** unique per node, so an operator (or a test) can find this connection in pg_stat_activity */
  readonly applicationName = `link-service-listener-${randomBytes(4).toString('hex')}`
  #listening = false
  #stopped = false
  #backoffMs = 100
  #probeTimer: NodeJS.Timeout | undefined
  #retry: NodeJS.Timeout | undefined
  #probes = 0
  /** the probe awaited: its payload, and what to call when it comes back */
  readonly #awaited = new Map<string, () => void>()
  /** times the feed was found down since start (a metric) */
  losses = 0

  /**
   * `listenUrl`: a direct connection (DATABASE_LISTEN_URL, or DATABASE_URL without a pooler);
   * `sql`: the main pool, through which the probes are sent.
   */
  constructor(
    readonly listenUrl: string,
    readonly sql: Sql,
    readonly cache: RedirectCache,
    readonly sessions: SessionCache,
    readonly log: Logger,
    readonly staleMs: number = 0,
    /** told of each changed code, or FLUSH_ALL (read replicas then ask the primary for a while) */
    readonly changed: (code: string) => void = () => {},
    /** told when webhook deliveries were queued (their own poll covers a feed that is down) */
    readonly webhooksQueued: () => void = () => {},
    /** told when another node waits for the visits of a capped link this one may hold */
    readonly capWanted: (code: string) => void = () => {},
  ) {
    // onnotify is a real postgres.js option (the one its own listen() uses) but is not typed.
    const options = {
      max: 1,
      idle_timeout: 0,
      max_lifetime: 0,
      fetch_types: false,
      prepare: false,
      connect_timeout: 5,
      onnotice: () => {},
      connection: { application_name: this.applicationName },
      onnotify: (channel: string, payload: string) => {
        if (channel === LINK_CHANNEL) {
          changed(payload)
          if (payload === FLUSH_ALL) cache.clear()
          else cache.invalidate(payload)
        }
        else if (channel === SESSION_CHANNEL) sessions.forgetUser(payload)
        else if (channel === WEBHOOK_CHANNEL) webhooksQueued()
        else if (channel === CAP_CHANNEL) capWanted(payload)
        else if (channel === FEED_PROBE_CHANNEL) this.#awaited.get(payload)?.()
      },
      onclose: () => this.#lost('connection closed'),
    }
    this.#sql = postgres(listenUrl, options)
  }

  /** A connection of the probe's own, opened only when the pool could not send one (see #probe). */
  #direct: postgres.Sql | undefined

  get listening(): boolean {
    return this.#listening
  }

  /**
   * Resolves once LISTEN is sent (or throws: the database cannot be reached). Up once the first
   * probe is back; a probe that is not, and later losses, are retried in the background.
   */
  async start(): Promise<void> {
    this.cache.setEnabled(false)
    this.sessions.setEnabled(false)
    await this.#subscribe()
    await this.#proveAndResume().catch((err: unknown) => this.#lost(reason(err)))
  }

  async #subscribe(): Promise<void> {
    await this.#sql`listen ${this.#sql(LINK_CHANNEL)}`
    await this.#sql`listen ${this.#sql(SESSION_CHANNEL)}`
    await this.#sql`listen ${this.#sql(FEED_PROBE_CHANNEL)}`
    await this.#sql`listen ${this.#sql(WEBHOOK_CHANNEL)}`
    await this.#sql`listen ${this.#sql(CAP_CHANNEL)}`
  }

  async #proveAndResume(): Promise<void> {
    await this.#probe()
    this.#listening = true
    this.#backoffMs = 100
    // Anything may have changed while we were not listening: what the cache held is read again
    // before it is answered, and answered only when that read fails (RedirectCache.resume).
    this.cache.resume()
    this.sessions.setEnabled(true)
    this.#scheduleProbe()
  }

  /**
   * Notifies itself through the main pool; rejects when the notice is not back within
   * PROBE_WAIT_MS. A notice not back halfway is not always a lost feed, so a connection of the
   * probe's own is asked meanwhile, within the same bound:
   * - while commits wait for a synchronous standby that is away, every notice queues behind theirs
   *   (PostgreSQL delivers notices in commit order) and nothing can have changed unseen, since
   *   every write waits too: the feed holds;
   * - when the pool has not even sent it (every connection busy), the same notice is sent on that
   *   connection: the feed holds if that one comes back.
   * A pool that sent it and got nothing back (a pooler in transaction mode) is a feed that is down.
   */
  async #probe(): Promise<void> {
    let sent = false
    const viaPool = this.#notifyAndAwait(PROBE_WAIT_MS, (payload) =>
      this.sql`select set_config('synchronous_commit', 'local', true), pg_notify(${FEED_PROBE_CHANNEL}, ${payload})`.then(() => void (sent = true)),
    )
    if ((await settlesWithin(viaPool, PROBE_WAIT_MS / 2)) === 'done') return viaPool
    const direct = (this.#direct ??= postgres(this.listenUrl, { max: 1, idle_timeout: 30, fetch_types: false, prepare: false, connect_timeout: 5, onnotice: () => {}, connection: { application_name: `${this.applicationName}-probe` } }))
    const holds = async (): Promise<void> => {
      const [row] = await direct<{ waiting: boolean }[]>`select exists (select 1 from pg_stat_activity where wait_event = 'SyncRep') as waiting`
      if (row?.waiting === true) return
      if (sent) throw new Error('its own notice, sent, was not back')
      await this.#notifyAndAwait(PROBE_WAIT_MS / 2, (payload) => direct`select set_config('synchronous_commit', 'local', true), pg_notify(${FEED_PROBE_CHANNEL}, ${payload})`)
    }
    const aside = holds()
    // Either may say the feed holds; only the pool's own timeout (PROBE_WAIT_MS) says it is down.
    await new Promise<void>((resolve, reject) => {
      viaPool.then(resolve, reject)
      aside.then(resolve, () => undefined)
    })
  }

  /** Sends a notice of the probe channel (`send`) and waits up to `ms` for it on the LISTEN connection. */
  async #notifyAndAwait(ms: number, send: (payload: string) => Promise<unknown>): Promise<void> {
    const payload = `${this.applicationName}:${++this.#probes}`
    let timer: NodeJS.Timeout | undefined
    const back = new Promise<void>((resolve, reject) => {
      this.#awaited.set(payload, resolve)
      timer = setTimeout(() => reject(new Error(`its own notice was not back within ${PROBE_WAIT_MS} ms (behind a pooler in transaction mode, set DATABASE_LISTEN_URL to a direct connection)`)), ms)
    })
    try {
      await Promise.all([back, send(payload)])
    } finally {
      clearTimeout(timer)
      this.#awaited.delete(payload)
    }
  }

  #scheduleProbe(): void {
    clearTimeout(this.#probeTimer)
    this.#probeTimer = setTimeout(() => {
      if (!this.#listening || this.#stopped) return
      this.#probe().then(
        () => this.#scheduleProbe(),
        (err: unknown) => this.#lost(reason(err)),
      )
    }, PROBE_EVERY_MS).unref()
  }

  #lost(why: string): void {
    if (this.#stopped) return
    this.cache.hold(this.staleMs)
    this.sessions.setEnabled(false)
    if (!this.#listening && this.#retry !== undefined) return
    if (this.#listening || this.losses === 0) {
      this.losses++
      this.log.warn('link change feed down; cached redirects served for a bounded time, nothing new cached', { why, stale_ms: this.staleMs })
    }
    this.#listening = false
    clearTimeout(this.#probeTimer)
    this.#scheduleRetry()
  }

  /** LISTEN again (a new connection, if the old one closed) and probe; until both succeed, with backoff. */
  #scheduleRetry(): void {
    clearTimeout(this.#retry)
    this.#retry = setTimeout(() => {
      this.#subscribe().then(() => this.#proveAndResume()).then(
        () => {
          this.#retry = undefined
          this.log.info('link change feed back; cached redirects are read again before use')
        },
        () => {
          if (this.#stopped) return
          this.#backoffMs = Math.min(MAX_BACKOFF_MS, this.#backoffMs * 2)
          this.#scheduleRetry()
        },
      )
    }, this.#backoffMs).unref()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#probeTimer)
    clearTimeout(this.#retry)
    await Promise.all([this.#sql.end({ timeout: 1 }), this.#direct?.end({ timeout: 1 })])
  }
}

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err))
