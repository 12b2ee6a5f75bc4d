// Cross-node cache invalidation: LISTEN for changed links and ended sessions, and what the caches
// do while that connection is down (docs/decisions.md, "Surviving the database going away").
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import type { SessionCache } from './auth/session-cache.js'
import { FLUSH_ALL, LINK_CHANNEL, SESSION_CHANNEL } from './db/channels.js'
import type { RedirectCache } from './links/redirect-cache.js'
import type { Logger } from './log.js'
import { succeedsWithin } from './time-limit.js'

const HEARTBEAT_MS = 2_000
const MAX_BACKOFF_MS = 5_000

export class LinkChangeFeed {
  readonly #sql: postgres.Sql
  /** unique per node, so an operator (or a test) can find this connection in pg_stat_activity */
  readonly applicationName = `link-service-listener-${randomBytes(4).toString('hex')}`
  #listening = false
  #stopped = false
  #backoffMs = 100
  #heartbeat: NodeJS.Timeout | undefined
  #retry: NodeJS.Timeout | undefined

  constructor(
    url: string,
    readonly cache: RedirectCache,
    readonly sessions: SessionCache,
    readonly log: Logger,
    readonly staleMs: number = 0,
  ) {
    // onnotify is a real postgres.js option (the one its own listen() uses) but is not typed.
    const options = {
      max: 1,
      idle_timeout: 0,
      max_lifetime: 0,
      fetch_types: false,
      connect_timeout: 5,
      onnotice: () => {},
      connection: { application_name: this.applicationName },
      onnotify: (channel: string, payload: string) => {
        if (channel === LINK_CHANNEL) {
          if (payload === FLUSH_ALL) cache.clear()
          else cache.invalidate(payload)
        }
        else if (channel === SESSION_CHANNEL) sessions.forgetUser(payload)
      },
      onclose: () => this.#lost('connection closed'),
    }
    this.#sql = postgres(url, options)
  }

  get listening(): boolean {
    return this.#listening
  }

  /** Resolves once listening (or throws); later losses are retried in the background. */
  async start(): Promise<void> {
    this.cache.setEnabled(false)
    this.sessions.setEnabled(false)
    await this.#listen()
    this.#heartbeat = setInterval(() => void this.#check(), HEARTBEAT_MS).unref()
  }

  async #listen(): Promise<void> {
    await this.#sql`listen ${this.#sql(LINK_CHANNEL)}`
    await this.#sql`listen ${this.#sql(SESSION_CHANNEL)}`
    this.#listening = true
    this.#backoffMs = 100
    // Anything may have changed while we were not listening: what the cache held is read again
    // before it is answered, and answered only when that read fails (RedirectCache.resume).
    this.cache.resume()
    this.sessions.setEnabled(true)
  }

  /**
   * A connection can die without closing (a network that drops packets sends no RST): then
   * notifications stop and nothing says so. A heartbeat that fails, or gets no answer within
   * its interval, counts as a loss.
   */
  async #check(): Promise<void> {
    if (!this.#listening) return
    if (!(await succeedsWithin(this.#sql`select 1`, HEARTBEAT_MS))) this.#lost('heartbeat failed or unanswered')
  }

  #lost(why: string): void {
    if (this.#stopped) return
    this.cache.hold(this.staleMs)
    this.sessions.setEnabled(false)
    if (!this.#listening && this.#retry !== undefined) return
    this.#listening = false
    this.log.warn('link change feed lost; cached redirects served for a bounded time, nothing new cached', { why, stale_ms: this.staleMs })
    this.#scheduleRetry()
  }

  #scheduleRetry(): void {
    clearTimeout(this.#retry)
    this.#retry = setTimeout(() => {
      this.#listen().then(
        () => {
          this.#retry = undefined
          this.log.info('link change feed back; cached redirects are read again before use')
        },
        () => {
          this.#backoffMs = Math.min(MAX_BACKOFF_MS, this.#backoffMs * 2)
          this.#scheduleRetry()
        },
      )
    }, this.#backoffMs).unref()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#heartbeat)
    clearTimeout(this.#retry)
    await this.#sql.end({ timeout: 1 })
  }
}
