// POST /api/v1/links/{code}/check: an owner asks for a check of their link now, and is answered
// the health it found.
import { sessionOf, type Ctx } from '../context.js'
import { linkChecksOff, linkNotFound } from '../http/errors.js'
import { json, type Reply } from '../http/reply.js'
import { presentHealth } from '../links/health.js'
import { findLink } from '../links/queries.js'
import { codeParam } from '../links/short-code.js'
import { takeOrRefuse } from '../ratelimit/leaky.js'

// A check asks someone else's server: ten at once per account, then ten a minute.
const CHECKS_ON_DEMAND = { limit: 10, drainPerSecond: 10 / 60 }

export async function postCheck(ctx: Ctx<'sql' | 'buckets' | 'linkChecks'>): Promise<Reply> {
  const checks = ctx.deps.linkChecks
  if (checks === undefined) throw linkChecksOff()
  const { userId } = sessionOf(ctx)
  const code = codeParam(ctx)
  if ((await findLink(ctx.deps.sql, userId, code)) === undefined) throw linkNotFound()
  await takeOrRefuse(ctx.deps.buckets, `link-checks account ${userId}`, CHECKS_ON_DEMAND)
  // The destination's time (up to 10 s a request) is not database time.
  if ((await ctx.deadline.excluding(checks.checkNow(code))) === 'no-link') throw linkNotFound()
  const link = await findLink(ctx.deps.sql, userId, code)
  if (link === undefined) throw linkNotFound()
  return json(200, presentHealth(link.health))
}
