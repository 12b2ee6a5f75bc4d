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
import { FEED_PROBE_CHANNEL, FLUSH_ALL, LINK_CHANNEL, SESSION_CHANNEL, WEBHOOK_CHANNEL } from './db/channels.js'
import type { Sql } from './db/types.js'
import type { RedirectCache } from './links/redirect-cache.js'
import type { Logger } from './log.js'
import { succeedsWithin } from './settle.js'

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
  #awaited: { payload: string; arrived: () => void } | undefined
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
        else if (channel === FEED_PROBE_CHANNEL && payload === this.#awaited?.payload) this.#awaited.arrived()
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
   * Notifies itself through the main pool; rejects when the notice is not back in time. A notice
   * that is not back is not always a lost feed:
   * - while commits wait for a synchronous standby that is away, every notice queues behind theirs
   *   (PostgreSQL delivers notices in commit order) and nothing can have changed unseen, since
   *   every write waits too: the feed holds (asked on a connection of the probe's own);
   * - when the pool could not even send it (every connection busy), the same is asked on that
   *   connection: the feed is down only if that notice does not come back either.
   * A pool that sent it and got nothing back (a pooler in transaction mode) is a feed that is down.
   */
  async #probe(): Promise<void> {
    let sent = false
    try {
      await this.#notifyAndAwait((payload) => this.sql`select set_config('synchronous_commit', 'local', true), pg_notify(${FEED_PROBE_CHANNEL}, ${payload})`.then(() => void (sent = true)))
    } catch (err) {
      this.#direct ??= postgres(this.listenUrl, { max: 1, idle_timeout: 30, fetch_types: false, prepare: false, connect_timeout: 5, onnotice: () => {}, connection: { application_name: `${this.applicationName}-probe` } })
      const direct = this.#direct
      if (await this.#waitingForStandby(direct)) return
      if (sent) throw err
      await this.#notifyAndAwait((payload) => direct`select set_config('synchronous_commit', 'local', true), pg_notify(${FEED_PROBE_CHANNEL}, ${payload})`)
    }
  }

  /** Whether some commit waits for a synchronous standby (wait event SyncRep); false when that cannot be told in time. */
  async #waitingForStandby(direct: postgres.Sql): Promise<boolean> {
    let waiting = false
    const asked = direct<{ waiting: boolean }[]>`select exists (select 1 from pg_stat_activity where wait_event = 'SyncRep') as waiting`.then(([row]) => (waiting = row?.waiting === true))
    return (await succeedsWithin(asked, PROBE_WAIT_MS)) && waiting
  }

  /**
   * Sends a notice of the probe channel (committed locally: with a synchronous standby away, a
   * commit waits for it while every notice still arrives) and waits for it on the LISTEN connection.
   */
  async #notifyAndAwait(send: (payload: string) => Promise<unknown>): Promise<void> {
    const payload = `${this.applicationName}:${++this.#probes}`
    let timer: NodeJS.Timeout | undefined
    const back = new Promise<void>((resolve, reject) => {
      this.#awaited = { payload, arrived: resolve }
      timer = setTimeout(() => reject(new Error(`its own notice was not back within ${PROBE_WAIT_MS} ms (behind a pooler in transaction mode, set DATABASE_LISTEN_URL to a direct connection)`)), PROBE_WAIT_MS)
    })
    try {
      await Promise.all([back, send(payload)])
    } finally {
      clearTimeout(timer)
      this.#awaited = undefined
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
