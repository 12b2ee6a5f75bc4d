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
import { requestIdFor } from '../http/request-id.js'
import { isShortCode } from './short-code.js'
import type { Visitor } from './visits.js'

/** The path prefix of every redirect. */
export const REDIRECT_PREFIX = '/r/'

/** The URL a browser follows for `code`. */
export const shortUrl = (baseUrl: string, code: string): string => `${baseUrl}${REDIRECT_PREFIX}${code}`

// A redirect depends on the link's current state: no cache may keep it (contract §5).
const NO_STORE = ['cache-control', 'no-store'] as const

// What the hot path reads of a request, from its raw headers in one pass. Node builds
// req.headers (an object, every name lower-cased) only when asked for it; the hot path never asks.
const seen = {
  host: false,
  requestId: undefined as string | undefined,
  visitor: { userAgent: undefined, referer: undefined, forwardedFor: undefined, peer: undefined } as Visitor,
}

/**
 * Reads a GET|HEAD's headers into `seen`; false when the general checks have something to say:
 * CORS (Origin), a body, Expect, no Host, or a header this path reads given twice (Node would
 * join or drop the repeats: the general path, which reads req.headers, decides then).
 */
function readPlain(req: IncomingMessage): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false
  const raw = req.rawHeaders
  const v = seen.visitor
  seen.host = false
  seen.requestId = v.userAgent = v.referer = v.forwardedFor = undefined
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!
    const value = raw[i + 1]!
    switch (name.length) {
      case 4: // Host
        if (name.toLowerCase() !== 'host') break
        if (seen.host) return false
        seen.host = true
        break
      case 6: // Origin, Expect
        if (name.toLowerCase() === 'origin' || name.toLowerCase() === 'expect') return false
        break
      case 7: // Referer
        if (name.toLowerCase() !== 'referer') break
        if (v.referer !== undefined) return false
        v.referer = value
        break
      case 10: // User-Agent
        if (name.toLowerCase() !== 'user-agent') break
        if (v.userAgent !== undefined) return false
        v.userAgent = value
        break
      case 12: // X-Request-Id
        if (name.toLowerCase() !== 'x-request-id') break
        if (seen.requestId !== undefined) return false
        seen.requestId = value
        break
      case 14: // Content-Length
        if (name.toLowerCase() === 'content-length') return false
        break
      case 15: // X-Forwarded-For
        if (name.toLowerCase() !== 'x-forwarded-for') break
        if (v.forwardedFor !== undefined) return false
        v.forwardedFor = value
        break
      case 17: // Transfer-Encoding
        if (name.toLowerCase() === 'transfer-encoding') return false
        break
    }
  }
  return seen.host
}

/** A redirect served to a GET counts as a visit; a HEAD is not a visit. */
function visit(deps: Deps, req: IncomingMessage, code: string, visitor: Visitor): void {
  if (req.method !== 'GET') return
  visitor.peer = req.socket.remoteAddress
  deps.visits.record(code, visitor)
}

const NOT_FOUND = prerender(linkNotFound())
const GONE = prerender(linkExpired())

/**
 * The hot path, for a request to `{REDIRECT_PREFIX}{code}`: answers a plain one (see readPlain)
 * whose code the cache knows, and returns the request id it answered with. Undefined when it
 * cannot: the app then dispatches the request, which ends in `redirect` below.
 */
export function serveCached(deps: Deps, req: IncomingMessage, res: ServerResponse, code: string): string | undefined {
  // Anything but a well-formed code (including "/r/" and "/r/a/b") takes the general path.
  if (!isShortCode(code)) return undefined
  const location = deps.cache.get(code)
  if (location === undefined || !readPlain(req)) return undefined
  const requestId = requestIdFor(seen.requestId)
  if (location === MISSING) {
    deps.metrics.redirect('unknown')
    sendPrerendered(res, NOT_FOUND, requestId)
  } else if (location === EXPIRED) {
    deps.metrics.redirect('expired')
    sendPrerendered(res, GONE, requestId) // counts no visit
  } else {
    deps.metrics.redirect('hit')
    visit(deps, req, code, seen.visitor)
    // One writeHead with a flat header list: only the request id varies.
    res.writeHead(302, ['location', location, NO_STORE[0], NO_STORE[1], 'content-length', '0', 'x-request-id', requestId, NOSNIFF[0], NOSNIFF[1]])
    res.end()
  }
  return requestId
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
  const h = ctx.req.headers
  // Node joins a repeated X-Forwarded-For with ", ": a string, like every header but Set-Cookie.
  visit(ctx.deps, ctx.req, code, { userAgent: h['user-agent'], referer: h.referer, forwardedFor: h['x-forwarded-for'] as string | undefined, peer: undefined })
  return { status: 302, headers: { location, [NO_STORE[0]]: NO_STORE[1] } }
}
