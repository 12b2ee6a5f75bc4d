// What a person sees who opens a short link in a browser and is not redirected: a page that says
// why (unknown, expired, stopped by the operator or by reports, or a blocked destination), and the
// preview of a link (GET /r/{code}/preview). Built on the way to an error, never before: the
// redirect itself does not read Accept (redirect.ts asks `wantsPage` only for a 404 or a 410), nor
// Accept-Language, which only a page reads (`visitorMessages`) to speak the visitor's language.
import type { IncomingMessage } from 'node:http'
import { appUrlFor } from '../config.js'
import type { Ctx, Deps } from '../context.js'
import { prefersHtml } from '../http/accept.js'
import { linkPasswordRequired } from '../http/errors.js'
import type { Reply } from '../http/reply.js'
import { messagesFor, type Messages } from '../web/catalogues.js'
import { cardPage, languageHeaders, PAGE_HEADERS, PASSWORD_PAGE_HEADERS, passwordPage, previewPage, stoppedPage, type PasswordState, type StoppedKind } from '../web/visitor-pages.js'
import type { CachedCard } from './redirect-cache.js'
import { findForVisitor, type VisitorRow } from './queries.js'
import { isShortCode, shortUrl } from './short-code.js'
import { answerOf, DISABLED, MISSING, NO_EXPIRY, NO_START, stopOf, type Stop, type StopAnswer } from './link-state.js'

type Uses = 'sql' | 'config' | 'baseUrl'

/** Whether this request is a browser's (Accept prefers text/html): read from the raw headers, only when asked. */
export function wantsPage(req: IncomingMessage): boolean {
  const raw = req.rawHeaders
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 6 && raw[i]!.toLowerCase() === 'accept') return prefersHtml(raw[i + 1])
  return false
}

/** The catalogue for the request's Accept-Language, read from the raw headers, only for a page. */
export function visitorMessages(req: IncomingMessage): Messages {
  const raw = req.rawHeaders
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 15 && raw[i]!.toLowerCase() === 'accept-language') return messagesFor(raw[i + 1])
  return messagesFor(undefined)
}

const reportUrl = (deps: Pick<Deps, Uses>, code: string | undefined) =>
  `${appUrlFor(deps.config, deps.baseUrl)}/report${code === undefined ? '' : `?code=${code}`}`

const pageReply = (status: number, html: string, m: Messages): Reply => ({ status, headers: { ...PAGE_HEADERS, ...languageHeaders(m) }, body: Buffer.from(html) })

/** A preview card for a link-preview fetcher (200, noindex): it never counts as a visit. */
export function cardReply(req: IncomingMessage, baseUrl: string, code: string, location: string, card: CachedCard): Reply {
  const m = visitorMessages(req)
  return {
    status: 200,
    headers: { ...PAGE_HEADERS, ...languageHeaders(m), 'x-robots-tag': 'noindex', vary: 'Accept, User-Agent, Accept-Language' },
    body: Buffer.from(cardPage(shortUrl(baseUrl, code), location, card, m)),
  }
}

/**
 * The form that asks a link's password (401), again after a wrong one, or after too many tries
 * (429 with Retry-After). `from` is the path it is answered at: /r/{code} ('link'), or a path below
 * it such as /r/{code}/unlock ('below'), so the form's relative action reaches /r/{code}/unlock
 * behind any path prefix.
 */
export function passwordReply(req: IncomingMessage, code: string, from: 'link' | 'below', state: PasswordState): Reply {
  const m = visitorMessages(req)
  const html = passwordPage(code, from === 'link' ? `${code}/unlock` : 'unlock', state, m)
  if (state.kind !== 'wait') return { status: 401, headers: { ...PASSWORD_PAGE_HEADERS, ...languageHeaders(m) }, body: Buffer.from(html) }
  return { status: 429, headers: { ...PASSWORD_PAGE_HEADERS, ...languageHeaders(m), 'retry-after': String(state.seconds) }, body: Buffer.from(html) }
}

/**
 * The page for a code the redirect did not follow. A stopped link's reason is read now (the cache
 * keeps only that it is stopped): a page for people may cost a read that the redirect never does.
 */
export async function stoppedReply(deps: Pick<Deps, Uses>, req: IncomingMessage, code: string, kind: StopAnswer['page']): Promise<Reply> {
  let shown: StoppedKind = kind === 'stopped' ? 'disabled' : kind
  if (kind === 'stopped') shown = (await findForVisitor(deps.sql, code))?.stopped ?? 'disabled'
  const m = visitorMessages(req)
  const { status, html } = stoppedPage(shown, isShortCode(code) ? code : undefined, reportUrl(deps, kind === 'unknown' ? undefined : code), m)
  return pageReply(status, html, m)
}

/** Where a link stops, by the one order of link-state.ts; undefined when it goes on. */
export function stopOfRow(link: VisitorRow | undefined): Stop | undefined {
  if (link === undefined) return MISSING
  return stopOf(link.stopped !== null, link.exhausted, link.expires_at?.getTime() ?? NO_EXPIRY, link.starts_at?.getTime() ?? NO_START, Date.now)
}

/**
 * GET /r/{code}/preview: a working link's destination, without redirecting. Anything else answers
 * as the redirect does: the same 404 or 410, and for a link with a password the same 401 (the form
 * for a browser), so the preview never shows what the password guards.
 */
export async function preview(ctx: Ctx<Uses>): Promise<Reply> {
  const code = ctx.param
  const link = isShortCode(code) ? await findForVisitor(ctx.deps.sql, code) : undefined
  const stop = stopOfRow(link)
  const page = wantsPage(ctx.req)
  if (stop !== undefined) {
    const answer = answerOf(stop)
    if (!page) throw answer.error()
    // A stopped link's page names why; the other stops' pages are named as their answer's.
    const kind = stop === DISABLED ? link!.stopped! : (answer.page as Exclude<StopAnswer['page'], 'stopped'>)
    const m = visitorMessages(ctx.req)
    const { status, html } = stoppedPage(kind, isShortCode(code) ? code : undefined, reportUrl(ctx.deps, kind === 'unknown' ? undefined : code), m)
    return pageReply(status, html, m)
  }
  if (link!.locked) {
    if (page) return passwordReply(ctx.req, code, 'below', { kind: 'ask' })
    throw linkPasswordRequired()
  }
  const m = visitorMessages(ctx.req)
  return pageReply(200, previewPage(code, shortUrl(ctx.deps.baseUrl, code), link!.url, reportUrl(ctx.deps, code), m), m)
}
