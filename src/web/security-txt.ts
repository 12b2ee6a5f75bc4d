// /.well-known/security.txt (RFC 9116): where to report a vulnerability of this instance, from
// SECURITY_CONTACT (checked at start: mailto:, https: or tel:). 404 when unset: an instance
// without a contact publishes nothing rather than a file with no one behind it.
import type { Ctx } from '../context.js'
import { routeNotFound } from '../http/errors.js'
import { bytes, type Reply } from '../http/reply.js'

const DAY_MS = 86_400_000
/** RFC 9116 2.5.5 advises less than a year ahead: 360 days, at the start of a UTC day, so the file changes once a day at most. */
const EXPIRES_DAYS = 360

export function securityTxt(ctx: Ctx<'config' | 'baseUrl'>, nowMs = Date.now()): Reply {
  const { securityContact, securityPolicyUrl, securityLanguages } = ctx.deps.config.trust
  if (securityContact === undefined) throw routeNotFound()
  const expires = new Date((Math.floor(nowMs / DAY_MS) + EXPIRES_DAYS) * DAY_MS)
  const lines = [
    `Contact: ${securityContact}`,
    `Expires: ${expires.toISOString().replace('.000Z', 'Z')}`,
    `Preferred-Languages: ${securityLanguages}`,
    `Canonical: ${ctx.deps.baseUrl}/.well-known/security.txt`,
    ...(securityPolicyUrl === undefined ? [] : [`Policy: ${securityPolicyUrl}`]),
  ]
  return bytes(200, 'text/plain; charset=utf-8', Buffer.from(lines.join('\n') + '\n'), { 'cache-control': 'public, max-age=86400' })
}
