// createApp(deps) → the request listener: route table, the order of checks (contract §2), and
// the one place where errors become responses.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { authenticate } from './auth/authenticate.js'
import { login, logout } from './auth/routes.js'
import { bearerToken } from './auth/tokens.js'
import type { Ctx, Deps, Handler, Route } from './context.js'
import { isConnectionError } from './db/index.js'
import { checkDeclaredLength, ClientGone, discardBody, hasBody, readJson } from './http/body.js'
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
import { errorReply, json, send, type Headers, type Reply } from './http/reply.js'
import { requestIdFor } from './http/request-id.js'
import { Router } from './http/router.js'
import { createLink, getLink, getLinks, patchLink, redirect, removeLink, serveCached } from './links/routes.js'
import { rateHeaders, type Decision } from './ratelimit/bucket.js'
import { clientKey } from './ratelimit/client-ip.js'
import { settlesWithin } from './time-limit.js'
import { deleteMe, getMe, patchMe, register } from './users/routes.js'

const EMPTY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>

function buildRouter(deps: Deps): Router<Route> {
  const open = (handler: Handler): Route => ({ handler, auth: false, body: 'none', rateLimited: false })
  const authed = (handler: Handler, body: Route['body'] = 'none'): Route => ({ handler, auth: true, body, rateLimited: false })
  const limited = (handler: Handler): Route => ({ handler, auth: false, body: 'json', rateLimited: true })
  const home: Reply = { status: 301, headers: { location: `${deps.config.appUrl}/` } }
  return new Router<Route>()
    .add('GET', '/', open(() => home))
    .add('GET', '/r/:code', open(redirect))
    .add('GET', '/healthz', open(() => health(deps)))
    .add('POST', '/api/v1/auth/login', limited(login))
    .add('POST', '/api/v1/auth/logout', authed(logout))
    .add('POST', '/api/v1/users', limited(register))
    .add('GET', '/api/v1/users/me', authed(getMe))
    .add('PATCH', '/api/v1/users/me', authed(patchMe, 'json'))
    .add('DELETE', '/api/v1/users/me', authed(deleteMe))
    .add('GET', '/api/v1/links', authed(getLinks))
    .add('POST', '/api/v1/links', authed(createLink, 'json'))
    .add('GET', '/api/v1/links/:code', authed(getLink))
    .add('PATCH', '/api/v1/links/:code', authed(patchLink, 'json'))
    .add('DELETE', '/api/v1/links/:code', authed(removeLink))
}

const HEALTH_TIMEOUT_MS = 2_000

/** 200 while the database answers; 503 when it fails, or is silent for 2 s (a hung network). */
async function health(deps: Deps): Promise<Reply> {
  const answered = await settlesWithin(deps.sql`select 1`, HEALTH_TIMEOUT_MS).catch(() => 'failed' as const)
  if (answered !== 'done') throw serviceUnavailable()
  return json(200, { status: 'ok' })
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
 * A GET|HEAD /r/... that the general checks would all pass: no CORS, no body, Host present, no
 * Expect. Such requests may skip dispatch and be answered straight from the redirect cache.
 */
function isPlainRedirect(req: IncomingMessage): boolean {
  const h = req.headers
  return (
    (req.method === 'GET' || req.method === 'HEAD') &&
    h.origin === undefined &&
    h.host !== undefined &&
    h.expect === undefined &&
    h['content-length'] === undefined &&
    h['transfer-encoding'] === undefined
  )
}

export interface App {
  listener: RequestListener
  /** 404 or 405 for a request the parser refused for its method alone (see client-errors.ts) */
  routeError: RouteError
}

export function createApp(deps: Deps): App {
  const router = buildRouter(deps)
  const routeError = (method: string, target: string): HttpError => {
    const match = router.find(method, pathOf(target))
    return match.found || match.allow === null ? routeNotFound() : methodNotAllowed(match.allow)
  }
  const { log, config } = deps

  async function dispatch(req: IncomingMessage, res: ServerResponse, base: Headers, path: string): Promise<void> {
    // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400 (Node's own would lack our headers).
    if (req.headers.host === undefined && req.httpVersionMinor === 1) throw badRequest('the Host header is required')
    if (isPreflight(req)) return send(res, { status: 204, headers: preflightHeaders() }, base)
    const match = router.find(req.method!, path)
    if (!match.found) throw routeError(req.method!, path)
    const route = match.value
    if (route.rateLimited) {
      let decision: Decision
      try {
        decision = await deps.limiter.take(clientKey(req, config.trustProxy))
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
    const ctx: Ctx = { req, deps, param: match.param, body: EMPTY, session: undefined }
    if (route.auth) {
      // Whatever an authenticated route answers is about one account: no cache may keep it.
      base['cache-control'] = 'no-store'
      ctx.session = await authenticate(deps.sql, bearerToken(req))
    }
    if (route.body === 'json') ctx.body = await readJson(req)
    else if (hasBody(req)) await discardBody(req)
    const reply = route.handler(ctx)
    send(res, reply instanceof Promise ? await reply : reply, base)
  }

  function fail(err: unknown, req: IncomingMessage, res: ServerResponse, base: Headers, requestId: string): void {
    if (err instanceof ClientGone || res.headersSent) {
      res.destroy()
      return
    }
    let httpError: HttpError
    if (err instanceof HttpError) httpError = err
    else if (isConnectionError(err)) {
      log.warn('database unavailable', { request_id: requestId, err })
      httpError = serviceUnavailable()
    } else {
      log.error('unhandled error', { request_id: requestId, method: req.method, err })
      httpError = internalError()
    }
    send(res, errorReply(httpError), base)
  }

  const logRedirects = config.accessLog === 'all'
  const logApi = config.accessLog !== 'off'
  const elapsedMs = (started: number) => Math.round((performance.now() - started) * 1000) / 1000

  const listener: RequestListener = (req, res) => {
    const requestId = requestIdFor(req.headers['x-request-id'] as string | undefined)
    const path = pathOf(req.url ?? '/')
    const isRedirect = path.startsWith('/r/')
    const logged = isRedirect ? logRedirects : logApi
    const started = logged ? performance.now() : 0
    // The hot path: answered synchronously, so its log line needs no 'finish' listener.
    if (isRedirect && isPlainRedirect(req) && serveCached(deps, req, res, path.slice(3), requestId)) {
      if (logged) log.access(req.method!, path, res.statusCode, elapsedMs(started), requestId)
      return
    }
    const base: Headers = { 'x-request-id': requestId }
    if (req.headers.origin !== undefined) addCorsHeaders(base)
    if (logged) res.once('finish', () => log.access(req.method!, path, res.statusCode, elapsedMs(started), requestId))
    trackResponse(req, res)
    dispatch(req, res, base, path).catch((err: unknown) => fail(err, req, res, base, requestId))
  }
  return { listener, routeError }
}
