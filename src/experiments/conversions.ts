// GET|POST /c/{id}: a destination page reports a conversion of the visit that brought it (the
// ls_cid its URL carried). No auth; CORS open like every route (http/cors.ts). 204, or a 1x1
// transparent GIF for an <img>; 404 for an id that is not one of ours or has expired. Each
// address has an allowance, so a flood of forged ids costs its sender, not the database.
import { clientKey, type Ctx } from '../context.js'
import { clickIdNotFound } from '../http/errors.js'
import { bytes, type Reply } from '../http/reply.js'
import { takeOrRefuse } from '../ratelimit/leaky.js'
import { dateOf } from '../stats/visits.js'
import { readClickId } from './click-id.js'
import { recordConversion } from './queries.js'

const DAY_MS = 86_400_000
/** Thirty at once, then one a second, per address: a visitor converts a few times, not hundreds. */
const CONVERSIONS_PER_ADDRESS = { limit: 30, drainPerSecond: 1 }
// GIF89a, 1x1, one transparent colour: the smallest image every browser shows.
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')
const NO_STORE = { 'cache-control': 'no-store' }

/** An image request (an <img> asks with image/... first): any image type accepted, by name or image/*. */
const wantsImage = (accept: string | undefined): boolean => accept !== undefined && /(^|,)\s*image\//i.test(accept)

export async function convert(ctx: Ctx<'config' | 'sql' | 'buckets' | 'experiments'>): Promise<Reply> {
  await takeOrRefuse(ctx.deps.buckets, `conversions address ${clientKey(ctx)}`, CONVERSIONS_PER_ADDRESS)
  const { experiments } = ctx.deps
  const click = readClickId(experiments.secret, ctx.param, Math.floor(Date.now() / DAY_MS), experiments.options.windowDays)
  if (click === undefined) throw clickIdNotFound()
  const answer = wantsImage(ctx.req.headers.accept) ? bytes(200, 'image/gif', PIXEL, NO_STORE) : { status: 204, headers: NO_STORE }
  // HEAD goes where GET goes (RFC 9110 9.3.2), but a prefetcher's look is not a conversion.
  if (ctx.req.method === 'HEAD') return answer
  const outcome = await recordConversion(ctx.deps.sql, ctx.param, click.code, click.variant, dateOf(click.dayNumber))
  if (outcome === 'unknown') throw clickIdNotFound()
  if (outcome === 'counted') experiments.converted(click.code)
  return answer
}
