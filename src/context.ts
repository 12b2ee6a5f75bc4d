// What a handler receives: the request, its route parameter, parsed body, session and the deps.
import type { IncomingMessage } from 'node:http'
import type { Session } from './auth/sessions.js'
import type { Config } from './config.js'
import type { Sql } from './db/index.js'
import type { Reply } from './http/reply.js'
import type { LocationLoader } from './links/location-loader.js'
import type { RedirectCache } from './links/redirect-cache.js'
import type { VisitCounter } from './links/visits.js'
import type { FeedState, WriteHealth } from './health.js'
import type { Logger } from './log.js'
import type { Limiter } from './ratelimit/limiter.js'
import type { Deadline } from './time-limit.js'

export interface Deps {
  config: Readonly<Config>
  sql: Sql
  /** public base for short_url, without a trailing slash */
  baseUrl: string
  limiter: Limiter
  cache: RedirectCache
  /** cache misses of the redirect path, batched per event-loop turn */
  locations: LocationLoader
  visits: VisitCounter
  /** how writes have been going, for /healthz */
  writes: WriteHealth
  /** the change feed's state, for /healthz */
  feedState: () => FeedState
  log: Logger
  /** a hash of a random password: unknown usernames are verified against it (equal work) */
  dummyPasswordHash: string
}

export interface Ctx {
  req: IncomingMessage
  deps: Deps
  /** the route's one path parameter, '' for static routes */
  param: string
  /** the parsed JSON object for JSON routes, {} otherwise */
  body: Record<string, unknown>
  /** set on routes that require a bearer session */
  session: Session | undefined
  /** the request's database time budget; wrap non-database waits (the KDF) in `excluding` */
  deadline: Deadline
}

export type Handler = (ctx: Ctx) => Reply | Promise<Reply>

export interface Route {
  handler: Handler
  /** needs a bearer session (401 otherwise) */
  auth: boolean
  /** takes a JSON object body (415/413/422), or none (any body is counted and discarded) */
  body: 'json' | 'none'
  /** takes a token from the shared login/registration bucket (spec §8) */
  rateLimited: boolean
}

/** The session of an authenticated route; the app guarantees it is there. */
export function sessionOf(ctx: Ctx): Session {
  /* c8 ignore next -- routes flagged auth always carry a session */
  if (ctx.session === undefined) throw new Error('route is missing auth: true')
  return ctx.session
}

/** For slow work queued on a request's behalf: false once its client has gone (Node ends the socket). */
export const clientWaits = (ctx: Ctx) => (): boolean => ctx.req.socket.writable
