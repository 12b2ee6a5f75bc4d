// createApp(deps) → the request listener: route table, the order of checks (contract §2), and
// the one place where errors become responses.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { authenticate } from './auth/authenticate.js'
import { login, logout } from './auth/routes.js'
import { getSessions, removeOtherSessions, removeSession } from './auth/session-routes.js'
import { bearerToken } from './auth/tokens.js'
import { appUrlFor } from './config.js'
import type { Ctx, Deps, Handler, Route } from './context.js'
import { isConnectionError } from './db/errors.js'
import { checkDeclaredLength, ClientGone, discardBody, hasBody, readJson, readJsonOrForm } from './http/body.js'
import { trackResponse, type RouteError } from './http/client-errors.js'
import { addCorsHeaders, isPreflight, preflightHeaders } from './http/cors.js'
import {
  badRequest,
  expectationFailed,
  HttpError,
  internalError,
  methodNotAllowed,
  rateLimited,
  routeNotFound,
  serviceUnavailable,
} from './http/errors.js'
import { errorReply, json, send, type HeaderMap, type Reply } from './http/reply.js'
import { requestIdFor } from './http/request-id.js'
import { Router } from './http/router.js'
import { getQr } from './links/qr.js'
import { redirect, servePlain, unlock, type Answered } from './links/redirect.js'
import { preview } from './links/visitor.js'
import { REDIRECT_PREFIX } from './links/short-code.js'
import { createLink, createLinks, getLink, getLinks, getTags, patchLink, removeLink } from './links/routes.js'
import { getDeliveries, getWebhook, getWebhooks, patchWebhook, postRetry, postWebhook, removeWebhook, testWebhook } from './webhooks/routes.js'
import { createReport } from './reports/routes.js'
import { getStats } from './links/stats.js'
import { postCheck } from './link-checks/routes.js'
import { convert } from './experiments/conversions.js'
import { openApiReply } from './openapi.js'
import { rateHeaders, type Decision } from './ratelimit/bucket.js'
import { clientKey } from './ratelimit/client-ip.js'
import { health } from './health.js'
import { fingerprintOf, idempotencyKeyOf, KeyedRequest, KeyTaken, replayOf } from './idempotency.js'
import { Deadline } from './time-limit.js'
import { deleteMe, getMe, patchMe, register } from './users/routes.js'
import { getExport } from './users/export.js'
import { securityTxt } from './web/security-txt.js'
import { getTransparencyJson, getTransparencyPage } from './transparency/routes.js'
import { getPublishedBlocklist } from './blocklist/published.js'

const EMPTY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>

function buildRouter(deps: Deps): Router<Route> {
  const open = (handler: Handler): Route => ({ handler, auth: false, body: 'none', rateLimited: false })
  const authed = (handler: Handler, body: Route['body'] = 'none'): Route => ({ handler, auth: true, body, rateLimited: false })
  const limited = (handler: Handler): Route => ({ handler, auth: false, body: 'json', rateLimited: true })
  /** takes an Idempotency-Key: the routes that create something */
  const keyed = (route: Route): Route => ({ ...route, keyed: true })
  // The base URL (and so the default APP_URL) is known once the port is bound: worked out on first use.
  let home: Reply | undefined
  const openApi = openApiReply()
  // Every route here is described in docs/openapi.json; a test holds the two to each other.
  const router = new Router<Route>()
    .add('GET', '/', open(() => (home ??= { status: 301, headers: { location: `${appUrlFor(deps.config, deps.baseUrl)}/` } })))
    .add('GET', `${REDIRECT_PREFIX}:code`, open(redirect))
    .add('GET', `${REDIRECT_PREFIX}:code/preview`, open(preview))
    // A password link's form posts here; /r/{code} itself is GET and HEAD only (contract §5).
    .add('POST', `${REDIRECT_PREFIX}:code/unlock`, { handler: unlock, auth: false, body: 'json-or-form', rateLimited: false })
    .add('GET', '/healthz', { ...open(() => health(deps.sql, deps.writes, deps.feedState)), ownBounds: true })
    .add('POST', '/api/v1/auth/login', limited(login))
    .add('POST', '/api/v1/auth/logout', authed(logout))
    .add('GET', '/api/v1/auth/sessions', authed(getSessions))
    .add('DELETE', '/api/v1/auth/sessions', authed(removeOtherSessions))
    .add('DELETE', '/api/v1/auth/sessions/:id', authed(removeSession))
    .add('POST', '/api/v1/users', keyed(limited(register)))
    .add('GET', '/api/v1/users/me', authed(getMe))
    .add('PATCH', '/api/v1/users/me', authed(patchMe, 'json'))
    .add('DELETE', '/api/v1/users/me', authed(deleteMe))
    .add('GET', '/api/v1/links', authed(getLinks))
    .add('GET', '/api/v1/tags', authed(getTags))
    .add('POST', '/api/v1/links', keyed(authed(createLink, 'json')))
    .add('POST', '/api/v1/links/bulk', keyed(authed(createLinks, 'json')))
    .add('GET', '/api/v1/links/:code', authed(getLink))
    .add('PATCH', '/api/v1/links/:code', authed(patchLink, 'json'))
    .add('DELETE', '/api/v1/links/:code', authed(removeLink))
    .add('GET', '/api/v1/links/:code/stats', authed(getStats))
    .add('GET', '/api/v1/links/:code/qr', authed(getQr))
    .add('POST', '/api/v1/links/:code/check', authed(postCheck))
    .add('GET', '/api/v1/webhooks', authed(getWebhooks))
    .add('POST', '/api/v1/webhooks', keyed(authed(postWebhook, 'json')))
    .add('GET', '/api/v1/webhooks/:id', authed(getWebhook))
    .add('PATCH', '/api/v1/webhooks/:id', authed(patchWebhook, 'json'))
    .add('DELETE', '/api/v1/webhooks/:id', authed(removeWebhook))
    .add('POST', '/api/v1/webhooks/:id/test', keyed(authed(testWebhook)))
    .add('GET', '/api/v1/webhooks/:id/deliveries', authed(getDeliveries))
    .add('POST', '/api/v1/webhooks/:id/deliveries/:delivery/retry', keyed(authed(postRetry)))
    // A destination page's conversion (experiments/conversions.ts): GET for an <img>, POST for a beacon.
    .add('GET', '/c/:id', open(convert))
    .add('POST', '/c/:id', open(convert))
    .add('POST', '/api/v1/reports', { handler: createReport, auth: false, body: 'json', rateLimited: false })
    .add('GET', '/api/v1/openapi.json', open(() => openApi))
    // What an instance publishes about itself, and a person's own export.
    .add('GET', '/api/v1/users/me/export', authed(getExport))
    .add('GET', '/.well-known/security.txt', open(securityTxt))
    .add('GET', '/transparency', open(getTransparencyPage))
    .add('GET', '/transparency.json', open(getTransparencyJson))
    .add('GET', '/blocklist.txt', open(getPublishedBlocklist))
  if (deps.config.serveApp) {
    const file = (ctx: Ctx) => deps.appFiles!.reply(ctx.param, ctx.req.headers['if-none-match'], ctx.req.headers['accept-encoding'])
    router
      .add('GET', '/app', open(() => ({ status: 301, headers: { location: `${deps.baseUrl}/app/` } })))
      .add('GET', '/app/*path', open(file))
  }
  return router
}

/** The path of a request target: origin-form as is, absolute-form reduced to its path. */
export function pathOf(target: string): string {
  const q = target.indexOf('?')
  const path = q === -1 ? target : target.slice(0, q)
  if (path.charCodeAt(0) === 47 /* / */) return path
  const m = /^https?:\/\/[^/]*(\/.*)?$/i.exec(path)
  return m === null ? path : (m[1] ?? '/')
}

/**
 * A request that (when it succeeds) wrote links: its outcome tells /healthz about the writes that
 * matter. Other writes (a registration, a login) may succeed while links cannot be written.
 */
/** A method that changes nothing (RFC 9110 9.2.1). */
const safe = (req: IncomingMessage) => req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS'
const writes = (req: IncomingMessage) => req.method !== 'GET' && req.method !== 'HEAD' && pathOf(req.url ?? '').startsWith('/api/v1/links')

export interface App {
  listener: RequestListener
  /** every method and path the router serves (HEAD implied by GET), for the OpenAPI test */
  routes: Array<{ method: string; path: string }>
  /** 404 or 405 for a request the parser refused for its method alone (see client-errors.ts) */
  routeError: RouteError
  /** From now on every answer says `Connection: close` and ends its connection (shutdown). */
  drain(): void
}

export function createApp(deps: Deps): App {
  const router = buildRouter(deps)
  const routeError = (method: string, target: string): HttpError => {
    const match = router.find(method, pathOf(target))
    return match.found || match.allow === null ? routeNotFound() : methodNotAllowed(match.allow)
  }
  const { log, config, metrics } = deps

  /** `route` is told the matched route pattern, for the metrics. */
  async function dispatch(req: IncomingMessage, res: ServerResponse, base: HeaderMap, path: string, route: { name: string }): Promise<void> {
    // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400 (Node's own would lack our headers).
    if (req.headers.host === undefined && req.httpVersionMinor === 1) throw badRequest('the Host header is required')
    if (isPreflight(req)) {
      route.name = 'OPTIONS preflight'
      return send(res, { status: 204, headers: preflightHeaders() }, base)
    }
    const match = router.find(req.method!, path)
    if (!match.found) throw routeError(req.method!, path)
    route.name = `${req.method === 'HEAD' ? 'GET' : req.method} ${match.path}`
    const { value: handlerRoute } = match
    // Every wait on the database below runs against one budget (DB_TIMEOUT_MS): no request waits
    // for a database that does not answer longer than that.
    const deadline = new Deadline(config.dbTimeoutMs, deps.circuit)
    // A write that would meet an open circuit is refused before it sends anything: once sent, it
    // is waited for (it may commit), never answered early.
    if (!safe(req) && !handlerRoute.ownBounds && !deadline.admitted()) throw serviceUnavailable('the database is not answering; retry later')
    const key = handlerRoute.keyed ? idempotencyKeyOf(req.headers['idempotency-key']) : undefined
    if (handlerRoute.rateLimited) {
      let decision: Decision
      try {
        decision = await deadline.run(deps.limiter.take(clientKey(req, config.trustProxy)))
      } catch (err) {
        // The bucket's state is unknown (its database is down): the answer still carries the
        // headers, as every response of these routes must (contract §7), with nothing promised.
        Object.assign(base, rateHeaders({ allowed: true, remaining: 0, retryAfterSeconds: 0 }))
        throw err
      }
      Object.assign(base, rateHeaders(decision))
      if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds)
    }
    // Node hands us the expectations it cannot meet (anything but 100-continue). They concern the
    // body, so they are judged with it: after route, method and rate limit (contract §2).
    if (req.headers.expect !== undefined && req.headers.expect.toLowerCase() !== '100-continue') throw expectationFailed()
    checkDeclaredLength(req)
    const ctx: Ctx = { req, deps, param: match.param, body: EMPTY, session: undefined, deadline, effect: (work) => work(deps.sql) }
    if (handlerRoute.auth) {
      // Whatever an authenticated route answers is about one account: no cache may keep it.
      base['cache-control'] = 'no-store'
      ctx.session = await deadline.run(authenticate(deps.sql, deps.sessions, bearerToken(req)))
    }
    // The body arrives at the client's pace: that is the request timeout's business, not this one's.
    if (handlerRoute.body === 'json') ctx.body = await readJson(req)
    else if (handlerRoute.body === 'json-or-form') ctx.body = await readJsonOrForm(req)
    else if (hasBody(req)) await discardBody(req)
    const answer = key === undefined ? await answerOf(handlerRoute, ctx) : await keyedAnswer(handlerRoute, ctx, key, path)
    if (writes(req) && answer.status < 300) deps.writes.record(true)
    send(res, answer, base)
  }

  async function answerOf(route: Route, ctx: Ctx): Promise<Reply> {
    const reply = route.handler(ctx)
    return reply instanceof Promise ? await (route.ownBounds ? reply : ctx.deadline.run(reply)) : reply
  }

  /**
   * A request with an Idempotency-Key: the key's first result when there is one (422 when it was
   * for another request), else the handler, whose effect and result are committed together.
   */
  async function keyedAnswer(route: Route, ctx: Ctx, key: string, path: string): Promise<Reply> {
    const scope = ctx.session === undefined ? 'anon' : `u:${ctx.session.userId}`
    const fingerprint = fingerprintOf(ctx.req.method!, path, ctx.body)
    const replay = () => ctx.deadline.run(replayOf(deps.sql, scope, key, fingerprint))
    const first = await replay()
    if (first !== undefined) return first
    const keyed = new KeyedRequest(deps.sql, scope, key, fingerprint)
    ctx.effect = keyed.effect
    let outcome: unknown
    try {
      outcome = await ctx.deadline.run(route.handler(ctx))
    } catch (err) {
      if (err instanceof KeyTaken) return (await replay())!
      if (err instanceof HttpError && err.status === 503) {
        keyed.abandon() // the time limit: whatever still runs is rolled back
        throw err
      }
      outcome = err
    }
    await ctx.deadline.run(keyed.settle(outcome))
    if (outcome instanceof Error) throw outcome
    return outcome as Reply
  }

  function fail(err: unknown, req: IncomingMessage, res: ServerResponse, base: HeaderMap, requestId: string): void {
    if (err instanceof ClientGone || res.headersSent) {
      res.destroy()
      return
    }
    let httpError: HttpError
    if (err instanceof HttpError) httpError = err
    else if (isConnectionError(err)) {
      if (writes(req)) deps.writes.record(false)
      deps.metrics.databaseError()
      log.warn('database unavailable', { request_id: requestId, err })
      httpError = serviceUnavailable()
    } else {
      log.error('unhandled error', { request_id: requestId, method: req.method, err })
      httpError = internalError()
    }
    send(res, errorReply(httpError), base)
  }

  // A request is timed only when its line will be written: at LOG_LEVEL=warn none is.
  const logRedirects = log.writesAccess && config.accessLog === 'all'
  const logApi = log.writesAccess && config.accessLog !== 'off'
  const elapsedMs = (started: number) => Math.round((performance.now() - started) * 1000) / 1000
  const REDIRECT_ROUTE = `GET ${REDIRECT_PREFIX}:code`
  /** The request's access line and metrics, as each is wanted. */
  const answered = (req: IncomingMessage, path: string, route: string, status: number, started: number, requestId: string, logged: boolean) => {
    if (logged) log.access(req.method!, path, status, elapsedMs(started), requestId)
    metrics.request(route, status, (performance.now() - started) / 1000)
  }

  const plainAnswered: Answered = {
    answered(req, path, status, started, requestId) {
      if (logRedirects || metrics.enabled) answered(req, path, REDIRECT_ROUTE, status, started, requestId, logRedirects)
    },
    failed: (err, req, res, requestId) => fail(err, req, res, { 'x-request-id': requestId }, requestId),
  }

  let draining = false
  const listener: RequestListener = (req, res) => {
    // Node then sends Connection: close and ends the connection after this answer.
    if (draining) res.shouldKeepAlive = false
    const path = pathOf(req.url ?? '/')
    const isRedirect = path.startsWith(REDIRECT_PREFIX)
    const logged = isRedirect ? logRedirects : logApi
    const timed = logged || metrics.enabled
    const started = timed ? performance.now() : 0
    // The hot path: answered without dispatch, its log line written when it answers.
    if (isRedirect && servePlain(deps, plainAnswered, req, res, path, started)) return
    const requestId = requestIdFor(req.headers['x-request-id'] as string | undefined)
    const base: HeaderMap = { 'x-request-id': requestId }
    if (req.headers.origin !== undefined) addCorsHeaders(base)
    const route = { name: 'unmatched' }
    if (timed) res.once('finish', () => answered(req, path, route.name, res.statusCode, started, requestId, logged))
    trackResponse(req, res)
    dispatch(req, res, base, path, route).catch((err: unknown) => fail(err, req, res, base, requestId))
  }
  return {
    listener,
    routeError,
    routes: router.routes(),
    drain: () => {
      draining = true
    },
  }
}
