// CORS (contract §6): any origin, no credentials; preflights answered on any path.
import type { IncomingMessage } from 'node:http'
import type { HeaderMap } from './reply.js'

const EXPOSE = 'X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, Retry-After, Location'
const PREFLIGHT_MAX_AGE_SECONDS = '86400'

export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined
}

/** Headers for an actual (non-preflight) request that carries Origin. */
export function addCorsHeaders(headers: HeaderMap): void {
  headers['access-control-allow-origin'] = '*'
  headers['access-control-expose-headers'] = EXPOSE
}

export function preflightHeaders(): HeaderMap {
  return {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'GET, HEAD, POST, PATCH, DELETE',
    // Named one by one: a "*" would not cover Authorization (Fetch standard).
    'access-control-allow-headers': 'Authorization, Content-Type, X-Request-Id',
    'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
  }
}
