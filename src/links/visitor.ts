// What a person sees who opens a short link in a browser and is not redirected: a page that says
// why (unknown, expired, stopped by the operator or by reports, or a blocked destination), and the
// preview of a link (GET /r/{code}/preview). Built on the way to an error, never before: the
// redirect itself does not read Accept (redirect.ts asks `wantsPage` only for a 404 or a 410).
import type { IncomingMessage } from 'node:http'
import { appUrlFor } from '../config.js'
import type { Ctx, Deps } from '../context.js'
import { prefersHtml } from '../http/accept.js'
import { linkDisabled, linkExhausted, linkExpired, linkNotFound } from '../http/errors.js'
import type { Reply } from '../http/reply.js'
import { cardPage, PAGE_HEADERS, PASSWORD_PAGE_HEADERS, passwordPage, previewPage, stoppedPage, type StoppedKind } from '../web/visitor-pages.js'
import type { CachedCard } from './redirect-cache.js'
import { findForVisitor, type VisitorRow } from './queries.js'
import { isShortCode, shortUrl } from './short-code.js'

type Uses = 'sql' | 'config' | 'baseUrl'

/** Whether this request is a browser's (Accept prefers text/html): read from the raw headers, only when asked. */
export function wantsPage(req: IncomingMessage): boolean {
  const raw = req.rawHeaders
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 6 && raw[i]!.toLowerCase() === 'accept') return prefersHtml(raw[i + 1])
  return false
}

const reportUrl = (deps: Pick<Deps, Uses>, code: string | undefined) =>
  `${appUrlFor(deps.config, deps.baseUrl)}/report${code === undefined ? '' : `?code=${code}`}`

const pageReply = (status: number, html: string): Reply => ({ status, headers: { ...PAGE_HEADERS }, body: Buffer.from(html) })

/** A preview card for a link-preview fetcher (200, noindex): it never counts as a visit. */
export const cardReply = (baseUrl: string, code: string, location: string, card: CachedCard): Reply => ({
  status: 200,
  headers: { ...PAGE_HEADERS, 'x-robots-tag': 'noindex', vary: 'Accept, User-Agent' },
  body: Buffer.from(cardPage(shortUrl(baseUrl, code), location, card)),
})

/** The form that asks a link's password (401), again after a wrong one. */
export const passwordReply = (code: string, wrong: boolean): Reply => ({ status: 401, headers: { ...PASSWORD_PAGE_HEADERS }, body: Buffer.from(passwordPage(code, wrong)) })

/**
 * The page for a code the redirect did not follow. A stopped link's reason is read now (the cache
 * keeps only that it is stopped): a page for people may cost a read that the redirect never does.
 */
export async function stoppedReply(deps: Pick<Deps, Uses>, code: string, kind: 'unknown' | 'expired' | 'exhausted' | 'stopped'): Promise<Reply> {
  let shown: StoppedKind = kind === 'stopped' ? 'disabled' : kind
  if (kind === 'stopped') shown = (await findForVisitor(deps.sql, code))?.stopped ?? 'disabled'
  const { status, html } = stoppedPage(shown, isShortCode(code) ? code : undefined, reportUrl(deps, kind === 'unknown' ? undefined : code))
  return pageReply(status, html)
}

/** Why a link does not redirect, in the redirect's order (redirect.ts knownOf); undefined when it does. */
function stateOf(link: VisitorRow | undefined, now: number): StoppedKind | undefined {
  if (link === undefined) return 'unknown'
  if (link.stopped !== null) return link.stopped
  if (link.expires_at !== null && link.expires_at.getTime() <= now) return 'expired'
  if (link.starts_at !== null && link.starts_at.getTime() > now) return 'unknown'
  return link.exhausted ? 'exhausted' : undefined
}

/** GET /r/{code}/preview: a working link's destination, without redirecting; the same 404 and 410 as the redirect otherwise. */
export async function preview(ctx: Ctx<Uses>): Promise<Reply> {
  const code = ctx.param
  const link = isShortCode(code) ? await findForVisitor(ctx.deps.sql, code) : undefined
  const kind = stateOf(link, Date.now())
  if (kind !== undefined) {
    if (!wantsPage(ctx.req)) throw kind === 'unknown' ? linkNotFound() : kind === 'expired' ? linkExpired() : kind === 'exhausted' ? linkExhausted() : linkDisabled()
    const { status, html } = stoppedPage(kind, isShortCode(code) ? code : undefined, reportUrl(ctx.deps, kind === 'unknown' ? undefined : code))
    return pageReply(status, html)
  }
  return pageReply(200, previewPage(code, shortUrl(ctx.deps.baseUrl, code), link!.url, reportUrl(ctx.deps, code)))
}
