// What a handler receives: the request, its route parameter, parsed body, session and the deps.
import type { IncomingMessage } from 'node:http'
import type { SessionCache } from './auth/session-cache.js'
import type { Session } from './auth/sessions.js'
import type { Config } from './config.js'
import type { Circuit } from './db/circuit.js'
import type { ReadPools } from './db/read-pools.js'
import type { Sql, Tx } from './db/types.js'
import type { Reply } from './http/reply.js'
import type { LocationLoader } from './links/location-loader.js'
import type { VisitCaps } from './links/caps.js'
import type { RedirectCache } from './links/redirect-cache.js'
import type { VisitCounter } from './stats/visits.js'
import type { ExperimentCounter } from './experiments/counter.js'
import type { FeedState, WriteHealth } from './health.js'
import type { Logger } from './log.js'
import type { Metrics } from './metrics.js'
import type { LinkChecker } from './link-checks/checker.js'
import type { Passwords, Requester } from './passwords/passwords.js'
import { clientKey as clientKeyOf } from './ratelimit/client-ip.js'
import type { LeakyBuckets } from './ratelimit/leaky.js'
import type { CountryOf } from './stats/geo.js'
import type { Limiter } from './ratelimit/limiter.js'
import type { Deadline } from './time-limit.js'
import type { AppFiles } from './web/static-files.js'

export interface Deps {
  config: Readonly<Config>
  sql: Sql
  /** public base for short_url, without a trailing slash */
  baseUrl: string
  limiter: Limiter
  cache: RedirectCache
  /** sessions checked lately, so that most authenticated requests need no read of their own */
  sessions: SessionCache
  /** reads that tolerate replication lag: on a replica of DATABASE_READ_URL, else on the primary */
  reads: ReadPools
  /** cache misses of the redirect path, batched per event-loop turn */
  locations: LocationLoader
  /** the visits a capped link has left, taken per event-loop turn (links/caps.ts) */
  caps: VisitCaps
  visits: VisitCounter
  /** variant visits counted on the redirect path, the experiment secret and the click id window */
  experiments: ExperimentCounter
  /** the country of a client address (stats/geo.ts), for redirect rules and the statistics */
  countryOf: CountryOf
  /** opens while the database cannot be reached: requests then fail at once (db/circuit.ts) */
  circuit: Circuit
  /** how link writes have been going, for /healthz */
  writes: WriteHealth
  /** the change feed's state, for /healthz */
  feedState: () => FeedState
  log: Logger
  /** the password KDF: every hash and every check goes through it */
  passwords: Passwords
  /** failed logins, password changes and deletions, counted across the cluster */
  buckets: LeakyBuckets
  /** Prometheus metrics, or NO_METRICS when METRICS_PORT is unset */
  metrics: Metrics
  /** the web app's files, served at /app/; undefined with SERVE_APP=off */
  appFiles: AppFiles | undefined
  /** tells this node's redirect cache that these links changed (other nodes hear it by NOTIFY) */
  forgetLinks(codes: readonly string[]): void
  /** this node's destination checks; undefined with LINK_CHECKS=off */
  linkChecks: Pick<LinkChecker, 'wake' | 'checkNow'> | undefined
}

/**
 * What a handler receives. `Uses` names the shared services it may touch: each route group
 * declares its own, so what a handler can reach is written in its type.
 */
export interface Ctx<Uses extends keyof Deps = keyof Deps> {
  req: IncomingMessage
  deps: Pick<Deps, Uses>
  /** the route's one path parameter, '' for static routes */
  param: string
  /** the parsed JSON object for JSON routes, {} otherwise */
  body: Record<string, unknown>
  /** set on routes that require a bearer session */
  session: Session | undefined
  /** the request's database time budget; wrap non-database waits (the KDF) in `excluding` */
  deadline: Deadline
  /**
   * Runs the one write a create route exists for. Under an Idempotency-Key it runs inside the
   * transaction that records the key and the result (idempotency.ts); otherwise on `deps.sql`.
   */
  effect: <T>(work: (sql: Sql | Tx) => Promise<T>) => Promise<T>
}

export type Handler = (ctx: Ctx) => Reply | Promise<Reply>

export interface Route {
  handler: Handler
  /** needs a bearer session (401 otherwise) */
  auth: boolean
  /** takes a JSON object body (415/413/422), a JSON object or an HTML form, or none (any body is counted and discarded) */
  body: 'json' | 'json-or-form' | 'none'
  /** takes a token from the shared login/registration bucket (spec §8) */
  rateLimited: boolean
  /** takes an Idempotency-Key header: the first result is answered again (idempotency.ts) */
  keyed?: boolean
  /**
   * bounds its own waits and always answers its own document (/healthz): not run under the
   * request's DB_TIMEOUT_MS deadline, whose open circuit would cut it short with the error shape
   */
  ownBounds?: boolean
}

/** The session of an authenticated route; the app guarantees it is there. */
export function sessionOf(ctx: Ctx<never>): Session {
  /* c8 ignore next -- routes flagged auth always carry a session */
  if (ctx.session === undefined) throw new Error('route is missing auth: true')
  return ctx.session
}

/** The key this request's client is counted under (its address; IPv6 by /64). */
export const clientKey = (ctx: Ctx<'config'>): string => clientKeyOf(ctx.req, ctx.deps.config.trustProxy)

/** A password check on this request's behalf, for `account`; it leaves the line if the client hangs up. */
export function requester(ctx: Ctx<'config'>, account: string): Requester {
  const socket = ctx.req.socket
  return {
    address: clientKey(ctx),
    account,
    whenGone(leave) {
      if (socket.destroyed) {
        leave()
        return () => {}
      }
      socket.once('close', leave)
      return () => socket.off('close', leave)
    },
  }
}
