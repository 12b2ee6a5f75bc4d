// /api/v1/links (contract §4) and the browser-facing GET|HEAD /r/{code} (contract §5).
import { sessionOf, type Ctx } from '../context.js'
import { codeTaken, linkExpired, linkLimitExceeded, linkNotFound, unauthorized } from '../http/errors.js'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Deps } from '../context.js'
import { json, noContent, prerender, sendFound, sendPrerendered, type Reply } from '../http/reply.js'
import { deleteLink, findLink, insertLink, listLinks, updateLink, type LinkRow } from './queries.js'
import type { Target } from './location-loader.js'
import { EXPIRED, MISSING, NO_EXPIRY } from './redirect-cache.js'
import { isShortCode } from './short-code.js'
import { parseLinkChange, parseLinkCreate, toLocation } from './validate.js'

export const MAX_LINKS_PER_ACCOUNT = 50

const present = (baseUrl: string, link: LinkRow) => ({
  code: link.code,
  url: link.url,
  short_url: `${baseUrl}/r/${link.code}`,
  created_at: link.created_at.toISOString(),
  updated_at: link.updated_at.toISOString(),
  visits: link.visits,
  last_visited_at: link.last_visited_at?.toISOString() ?? null,
  expires_at: link.expires_at?.toISOString() ?? null,
})

export async function createLink(ctx: Ctx): Promise<Reply> {
  const session = sessionOf(ctx)
  const input = parseLinkCreate(ctx.body)
  const { sql, cache, baseUrl } = ctx.deps
  const result = await insertLink(sql, session.userId, { ...input, location: toLocation(input.url) }, MAX_LINKS_PER_ACCOUNT)
  if (result === 'no-user') throw unauthorized()
  if (result === 'limit') throw linkLimitExceeded(MAX_LINKS_PER_ACCOUNT)
  if (result === 'taken') throw codeTaken()
  cache.invalidate(result.code)
  return json(201, present(baseUrl, result), { location: `/api/v1/links/${result.code}` })
}

export async function getLinks(ctx: Ctx): Promise<Reply> {
  const links = await listLinks(ctx.deps.sql, sessionOf(ctx).userId)
  return json(200, { links: links.map((l) => present(ctx.deps.baseUrl, l)) })
}

export async function getLink(ctx: Ctx): Promise<Reply> {
  const code = codeParam(ctx)
  const link = await findLink(ctx.deps.sql, sessionOf(ctx).userId, code)
  if (link === undefined) throw linkNotFound()
  return json(200, present(ctx.deps.baseUrl, link))
}

export async function patchLink(ctx: Ctx): Promise<Reply> {
  const session = sessionOf(ctx)
  const { url, expiresAt } = parseLinkChange(ctx.body) // field validation comes before the look-up (contract §2)
  const code = codeParam(ctx)
  const change = { url: url === undefined ? undefined : { url, location: toLocation(url) }, expiresAt }
  const link = await updateLink(ctx.deps.sql, session.userId, code, change)
  if (link === undefined) throw linkNotFound()
  ctx.deps.cache.invalidate(code)
  return json(200, present(ctx.deps.baseUrl, link))
}

export async function removeLink(ctx: Ctx): Promise<Reply> {
  const code = codeParam(ctx)
  if (!(await deleteLink(ctx.deps.sql, sessionOf(ctx).userId, code))) throw linkNotFound()
  ctx.deps.cache.invalidate(code)
  return noContent()
}

/** A malformed code is simply not found, and never reaches the database. */
export function codeParam(ctx: Ctx): string {
  if (!isShortCode(ctx.param)) throw linkNotFound()
  return ctx.param
}

const NOT_FOUND = prerender(linkNotFound())
const GONE = prerender(linkExpired())

/**
 * The hot path, for a plain GET|HEAD /r/{code} (app.ts decides what is plain): answers from the
 * cache with no Reply, no Error and no JSON built. False when it cannot: the app then runs
 * `redirect` below, which reads the database.
 */
export function serveCached(deps: Deps, req: IncomingMessage, res: ServerResponse, code: string, requestId: string): boolean {
  // Anything but a well-formed code (including "/r/" and "/r/a/b") takes the general path.
  if (!isShortCode(code)) return false
  const location = deps.cache.get(code)
  if (location === undefined) return false
  if (location === MISSING) sendPrerendered(res, NOT_FOUND, requestId)
  else if (location === EXPIRED) sendPrerendered(res, GONE, requestId) // counts nothing
  else {
    if (req.method === 'GET') deps.visits.record(code, req) // a HEAD is not a visit
    sendFound(res, location, requestId)
  }
  return true
}

/**
 * GET|HEAD /r/{code}: cache, else one primary-key read; 302 to the precomputed Location, or 410
 * once the link has expired (by this node's clock).
 */
export function redirect(ctx: Ctx): Reply | Promise<Reply> {
  const code = ctx.param
  if (!isShortCode(code)) throw linkNotFound()
  const { cache } = ctx.deps
  const cached = cache.get(code)
  if (cached === MISSING) throw linkNotFound()
  if (cached === EXPIRED) throw linkExpired()
  if (cached !== undefined) return found(ctx, code, cached)
  const epoch = cache.epoch
  // The epoch is taken before the batch is sent, so a write in between keeps its result out.
  return ctx.deps.locations.load(code).then((target: Target | undefined) => {
    cache.set(code, target?.location, epoch, target?.expiresAt ?? NO_EXPIRY)
    if (target === undefined) throw linkNotFound()
    if (target.expiresAt <= Date.now()) throw linkExpired()
    return found(ctx, code, target.location)
  })
}

const NO_STORE = 'no-store'

function found(ctx: Ctx, code: string, location: string): Reply {
  if (ctx.req.method === 'GET') ctx.deps.visits.record(code, ctx.req) // a HEAD is not a visit
  return { status: 302, headers: { location, 'cache-control': NO_STORE } }
}
