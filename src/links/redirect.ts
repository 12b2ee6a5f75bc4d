// GET|HEAD /r/{code} (contract §5): the one home of the redirect decision. A plain request whose
// code the cache knows is answered here and now, with no Reply, no Error and no JSON built; any
// other goes through the app's dispatch to `redirect`, which reads the database. Both end in the
// same three answers: 302 to the precomputed Location, 404, or 410 once the link has expired.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Ctx, Deps } from '../context.js'
import { linkExpired, linkNotFound, type HttpError } from '../http/errors.js'
import { NOSNIFF, prerender, sendPrerendered, type Reply } from '../http/reply.js'
import type { Target } from './location-loader.js'
import { EXPIRED, MISSING, NO_EXPIRY } from './redirect-cache.js'
import type { Metrics } from '../metrics.js'
import { isShortCode } from './short-code.js'

/** The path prefix of every redirect. */
export const REDIRECT_PREFIX = '/r/'

/** The URL a browser follows for `code`. */
export const shortUrl = (baseUrl: string, code: string): string => `${baseUrl}${REDIRECT_PREFIX}${code}`

// A redirect depends on the link's current state: no cache may keep it (contract §5).
const NO_STORE = ['cache-control', 'no-store'] as const

/**
 * A GET|HEAD that the general checks would all pass: no CORS, no body, Host present, no Expect.
 * Such requests may skip dispatch and be answered straight from the cache.
 */
export function isPlainRedirect(req: IncomingMessage): boolean {
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

/** A redirect served to a GET counts as a visit; a HEAD is not a visit. */
function visit(deps: Deps, req: IncomingMessage, code: string): void {
  if (req.method === 'GET') deps.visits.record(code, req)
}

const NOT_FOUND = prerender(linkNotFound())
const GONE = prerender(linkExpired())

/**
 * The hot path, for a plain request (see isPlainRedirect): answers from the cache and returns
 * true, or returns false when the cache does not know the code (or it is malformed), and the
 * app dispatches the request to `redirect`.
 */
export function serveCached(deps: Deps, req: IncomingMessage, res: ServerResponse, code: string, requestId: string): boolean {
  // Anything but a well-formed code (including "/r/" and "/r/a/b") takes the general path.
  if (!isShortCode(code)) return false
  const location = deps.cache.get(code)
  if (location === undefined) return false
  if (location === MISSING) {
    deps.metrics.redirect('unknown')
    sendPrerendered(res, NOT_FOUND, requestId)
  } else if (location === EXPIRED) {
    deps.metrics.redirect('expired')
    sendPrerendered(res, GONE, requestId) // counts no visit
  } else {
    deps.metrics.redirect('hit')
    visit(deps, req, code)
    // One writeHead with a flat header list: only the request id varies.
    res.writeHead(302, ['location', location, NO_STORE[0], NO_STORE[1], 'content-length', '0', 'x-request-id', requestId, NOSNIFF[0], NOSNIFF[1]])
    res.end()
  }
  return true
}

/** The general path: the cache, else one batched primary-key read (see location-loader.ts). */
export function redirect(ctx: Ctx): Reply | Promise<Reply> {
  const code = ctx.param
  if (!isShortCode(code)) throw linkNotFound()
  const { cache, metrics } = ctx.deps
  const cached = cache.get(code)
  if (cached === MISSING) throw unknown(metrics)
  if (cached === EXPIRED) throw expired(metrics)
  if (cached !== undefined) return found(ctx, code, cached, 'hit')
  const epoch = cache.epoch
  // The epoch is taken before the batch is sent, so a write in between keeps its result out.
  return ctx.deps.locations.load(code).then((target: Target | undefined) => {
    cache.set(code, target?.location, epoch, target?.expiresAt ?? NO_EXPIRY)
    if (target === undefined) throw unknown(metrics)
    if (target.expiresAt <= Date.now()) throw expired(metrics)
    return found(ctx, code, target.location, 'miss')
  })
}

function unknown(metrics: Metrics): HttpError {
  metrics.redirect('unknown')
  return linkNotFound()
}

function expired(metrics: Metrics): HttpError {
  metrics.redirect('expired')
  return linkExpired()
}

function found(ctx: Ctx, code: string, location: string, outcome: 'hit' | 'miss'): Reply {
  ctx.deps.metrics.redirect(outcome)
  visit(ctx.deps, ctx.req, code)
  return { status: 302, headers: { location, [NO_STORE[0]]: NO_STORE[1] } }
}
