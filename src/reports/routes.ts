// POST /api/v1/reports: anyone, signed in or not, may report a link (by its short URL or code).
// Each client address has its own allowance; a repeat for the same link is accepted, not stored.
import { createHash } from 'node:crypto'
import { clientKey, type Ctx } from '../context.js'
import { Fields } from '../http/fields.js'
import { linkNotFound } from '../http/errors.js'
import { takeOrRefuse } from '../ratelimit/leaky.js'
import { json, type Reply } from '../http/reply.js'
import { isShortCode } from '../links/short-code.js'
import { findForVisitor } from '../links/queries.js'
import { MISSING } from '../links/link-state.js'
import { stopOfRow } from '../links/visitor.js'
import { fileReport, REASONS, type NewReport, type Reason } from './queries.js'

export const MAX_DETAILS_CHARS = 1000
// Five at once, then one a minute, per address: a person reports a few links, not hundreds.
const REPORTS_PER_ADDRESS = { limit: 5, drainPerSecond: 1 / 60 }
// A short link as people copy it: any origin (proxies, old domains), the path /r/{code}, perhaps
// its preview page, a trailing slash, a query or a fragment; the scheme may be left out.
const SHORT_LINK = /^(?:https?:\/\/)?[^/?#\s]+\/r\/([0-9A-Za-z]{8})(?:\/preview)?\/?(?:[?#]\S*)?$/i

/** The report a body asks for, or 422 listing each field's problem. */
export function parseReport(body: Record<string, unknown>): Omit<NewReport, 'reporter'> {
  const f = new Fields(body)
  let code: string | undefined
  if (f.has('code')) {
    code = f.optionalString('code', { min: 8, max: 8 })
    if (code !== undefined && !isShortCode(code)) code = f.fail('code', 'INVALID', 'must be 8 Base62 characters (0-9, A-Z, a-z)')
  } else if (f.has('url')) {
    const url = f.optionalString('url', { min: 1, max: 4096, unit: 'bytes' })
    const m = url === undefined ? null : SHORT_LINK.exec(url.trim())
    if (url !== undefined && m === null) f.fail('url', 'INVALID', 'must be a short link of this service (…/r/{code})')
    code = m?.[1]
  } else {
    f.fail('code', 'REQUIRED', 'code or url is required')
  }
  const reason = f.string('reason', { min: 1, max: 16 })
  if (reason !== undefined && !(REASONS as readonly string[]).includes(reason)) f.fail('reason', 'INVALID', `must be one of ${REASONS.join(', ')}`)
  const details = f.optionalString('details', { min: 0, max: MAX_DETAILS_CHARS })
  f.check()
  return { code: code!, reason: reason as Reason, details: details === undefined || details.trim() === '' ? null : details }
}

export async function createReport(ctx: Ctx): Promise<Reply> {
  const report = parseReport(ctx.body)
  const address = clientKey(ctx)
  await takeOrRefuse(ctx.deps.buckets, `reports address ${address}`, REPORTS_PER_ADDRESS)
  // A link before its start is, to anyone but its owner, an unknown code (link-state.ts).
  if (stopOfRow(await findForVisitor(ctx.deps.sql, report.code)) === MISSING) throw linkNotFound()
  const reporter = createHash('sha256').update(address).digest('base64url')
  const { outcome, suspended } = await fileReport(ctx.deps.sql, { ...report, reporter }, ctx.deps.config.reportsSuspendAfter)
  if (outcome === 'no-link') throw linkNotFound()
  ctx.deps.metrics.reportReceived(report.reason)
  if (suspended) {
    ctx.deps.cache.invalidate(report.code)
    ctx.deps.log.warn('link suspended by reports', { code: report.code, after: ctx.deps.config.reportsSuspendAfter })
  }
  return json(202, { code: report.code, reason: report.reason, received: true })
}
