// GET|HEAD /r/{code} (contract §5): the one home of the redirect decision (docs/decisions.md,
// "the redirect path"). A plain request is answered by servePlain, any other through `redirect`.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { clientKey, requester, type Ctx, type Deps } from '../context.js'
import { trackResponse } from '../http/client-errors.js'
import { HttpError, invalidFields, linkNotFound, linkPasswordRequired } from '../http/errors.js'
import { NOSNIFF, prerender, send, sendPrerendered, type Prerendered, type Reply } from '../http/reply.js'
import type { Target } from './location-loader.js'
import { answerOf, DISABLED, EXHAUSTED, MISSING, NO_EXPIRY, NO_START, stopOf, STOPS, type Stop } from './link-state.js'
import { Guarded, type Answer, type Stored } from './redirect-cache.js'
import { Deadline } from '../time-limit.js'
import { requestIdFor } from '../http/request-id.js'
import { isShortCode, REDIRECT_PREFIX } from './short-code.js'
import type { Visitor } from '../stats/visit-tally.js'
import { cardReply, passwordReply, stoppedReply, wantsPage } from './visitor.js'
import { isPreviewFetcher } from './preview-fetchers.js'
import { findLinkPassword } from './queries.js'
import { noteFailedLinkPassword, takeUnlockAttempt } from '../ratelimit/password-limits.js'
import { clientAddress } from '../ratelimit/client-ip.js'
import { ruleTarget } from './rules.js'
import { clientKeyOf } from '../address.js'
import { DAY_MS } from '../stats/visit-tally.js'
import { isBot } from '../stats/bots.js'
import { Memo } from '../stats/memo.js'
import { newClickId, withClickId } from '../experiments/click-id.js'
import { pickVariant, visitorHash, type CachedExperiment } from '../experiments/variants.js'

/** What the redirect may touch: the cache, the batched look-up, the caps, the counters (of variants too) and the time budget; for a browser's page, the database and the base URL. */
type Uses = 'cache' | 'locations' | 'caps' | 'metrics' | 'visits' | 'config' | 'sql' | 'baseUrl' | 'countryOf' | 'experiments'
type RedirectDeps = Pick<Deps, Uses>

// A redirect depends on the link's current state: no cache may keep it (contract §5).
const NO_STORE = ['cache-control', 'no-store'] as const

// What the hot path reads of a request, from its raw headers in one pass. Node builds
// req.headers (an object, every name lower-cased) only when asked for it; the hot path never asks.
const seen = {
  host: false,
  requestId: undefined as string | undefined,
  /** Accept-Language, for redirect rules (rules.ts) */
  language: undefined as string | undefined,
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
  seen.requestId = seen.language = v.userAgent = v.referer = v.forwardedFor = undefined
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
      case 15: // X-Forwarded-For, Accept-Language
        if (name.toLowerCase() === 'accept-language') {
          if (seen.language !== undefined) return false
          seen.language = value
          break
        }
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

/** A redirect served to a GET (or to the POST of a link's password to /r/{code}/unlock) counts as a visit; a HEAD is not a visit. */
function visit(deps: RedirectDeps, req: IncomingMessage, code: string, visitor: Visitor): void {
  if (req.method === 'HEAD') return
  visitor.peer = req.socket.remoteAddress
  deps.visits.record(code, visitor)
}

// A browser gets a page instead (visitor.ts): a cache must tell the two apart.
const VARY = ['vary', 'Accept'] as const
const PRERENDERED = new Map<Stop, Prerendered>(STOPS.map((stop) => [stop, prerender(answerOf(stop).error(), VARY)]))
const LOCKED = prerender(linkPasswordRequired(), VARY)
const varied = (err: HttpError) => new HttpError(err.status, err.code, err.message, { [VARY[0]]: VARY[1] })

/** How the app hears that a plain request was answered (its log line, its metrics), or failed. */
export interface Answered {
  answered(req: IncomingMessage, path: string, status: number, started: number, requestId: string): void
  failed(err: unknown, req: IncomingMessage, res: ServerResponse, requestId: string): void
}

/** What the cache or the database said of a code: its Location (plain or Guarded), or where it stops (link-state.ts). */
type Known = Answer

/** What the cache keeps of a target: its Location (with its start and expiry), Guarded, DISABLED, EXHAUSTED, or undefined (unknown). */
const cachedOf = (target: Target | undefined): Stored | undefined =>
  target === undefined ? undefined : target.disabled ? DISABLED : target.exhausted ? EXHAUSTED : target.capped || target.locked || target.card !== undefined || target.rules !== undefined || target.experiment !== undefined
    ? new Guarded(target.location, target.capped, target.locked, target.card, target.rules, target.experiment)
    : target.location

/** The decision now, by the one order of link-state.ts (as the cache decides what it holds). */
function knownOf(target: Target | undefined): Known {
  const stored = cachedOf(target)
  if (stored === undefined) return MISSING
  const stop = stopOf(target!.disabled, target!.exhausted, target!.expiresAt, target!.startsAt, Date.now)
  return stop === undefined ? stored : stop
}

/** How long a read may keep a visitor waiting when the cache still holds an answer from before the feed's loss. */
const STALE_WAIT_MS = 250

/**
 * The decision for `code`: from the cache at once (a hit), or a promise of it after one batched
 * read that fills the cache (a miss). After the change feed came back, what the cache held is
 * asked of the database again, but answers when the read fails, or is slow (STALE_WAIT_MS): a
 * cached answer never waits out the database's time limit.
 */
function lookUp(deps: RedirectDeps, code: string): Known | Promise<Known> {
  const { cache } = deps
  const cached = cache.get(code)
  if (cached !== undefined) return cached
  const epoch = cache.epoch // taken before the batch is sent, so a write in between keeps its result out
  const read = deps.locations.load(code).then(
    (target) => {
      cache.set(code, cachedOf(target), epoch, target?.expiresAt ?? NO_EXPIRY, target?.startsAt ?? NO_START)
      return knownOf(target)
    },
    (err: unknown) => cache.stale(code) ?? Promise.reject(err),
  )
  const held = cache.stale(code)
  if (held === undefined) return read
  let timer: NodeJS.Timeout | undefined
  const slow = new Promise<Known>((resolve) => (timer = setTimeout(() => resolve(cache.stale(code) ?? held), STALE_WAIT_MS)))
  return Promise.race([read, slow]).finally(() => clearTimeout(timer))
}

/** Counts the decision in the metrics, once, whichever path answers it. */
function counted(deps: RedirectDeps, known: Known, source: 'hit' | 'miss'): Known {
  deps.metrics.redirect(typeof known === 'string' || known instanceof Guarded ? source : answerOf(known).metric)
  return known
}

/**
 * A capped link's decision, after its cap allowed it (caps.ts: from this node's block at once, or
 * from the database): a GET takes a visit of the cap, a HEAD only asks whether one is left.
 * Refused, the link is used up: the cache keeps that (unless the owner changed the link
 * meanwhile: `epoch`), so the next ones need no read.
 */
function afterCap(deps: RedirectDeps, req: IncomingMessage, code: string, location: string): string | Promise<string | typeof EXHAUSTED> {
  const allowed = deps.caps.allow(code, req.method !== 'HEAD')
  if (allowed === true) return location
  const epoch = deps.cache.epoch
  const decide = (yes: boolean) => {
    if (yes) return location
    deps.cache.exhaust(code, epoch)
    return EXHAUSTED
  }
  return allowed.then(decide)
}

/**
 * The first matching rule's target (rules.ts), from memory, or undefined. The country is looked
 * up only when a rule asks for it.
 */
function ruled(deps: RedirectDeps, req: IncomingMessage, link: Guarded, userAgent: string | undefined, language: string | undefined, forwardedFor: string | undefined): string | undefined {
  if (link.rules === undefined) return undefined
  const country = () => deps.countryOf(clientAddress(req.socket.remoteAddress, forwardedFor, deps.config.trustProxy))
  return ruleTarget(link.rules, { userAgent, acceptLanguage: language, country })
}

// Bots (as the statistics count them) are sent on like people but not counted for a variant: a
// crawler's visits would dilute every rate. A busy link sees few distinct agents: remembered.
const bots = new Memo<boolean>(1000)
const isBotAgent = (userAgent: string | undefined): boolean => userAgent === undefined || bots.get(userAgent, isBot)

/**
 * The variant of this visit (experiments/variants.ts), from memory: chosen by the visitor's hash
 * of the day, with a fresh click id when conversions are on, and counted (`count`) once the
 * redirect is sure, unless a bot made it.
 */
function variantOf(deps: RedirectDeps, req: IncomingMessage, code: string, experiment: CachedExperiment, userAgent: string | undefined, forwardedFor: string | undefined): { location: string; count(): void } {
  const { experiments } = deps
  const dayNumber = Math.floor(Date.now() / DAY_MS)
  const who = clientKeyOf(clientAddress(req.socket.remoteAddress, forwardedFor, deps.config.trustProxy))
  const hash = visitorHash(experiments.secret, dayNumber, code, who)
  const variant = pickVariant(experiment.bounds, hash)
  const target = experiment.locations[variant]!
  return {
    location: experiment.conversions ? withClickId(target, newClickId(experiments.secret, code, variant, dayNumber)) : target,
    count: () => {
      if (!isBotAgent(userAgent)) experiments.record(code, variant, dayNumber, hash)
    },
  }
}

/** A password link's question, asked before anything else of the link is known to the visitor. */
const ASK = Symbol('ask')

/**
 * What a Guarded link gives this request, in one order for both paths: a preview fetcher its card
 * (never for a password link), a password link the question, any other the place its rules or
 * its variants choose, after its cap when it has one.
 */
function pastGuard(deps: RedirectDeps, req: IncomingMessage, code: string, link: Guarded, userAgent: string | undefined, language: string | undefined, forwardedFor: string | undefined):
  { card: Reply } | typeof ASK | string | Promise<string | typeof EXHAUSTED> {
  if (link.card !== undefined && !link.locked && req.method !== 'POST' && isPreviewFetcher(userAgent)) return { card: cardReply(req, deps.baseUrl, code, link.location, link.card) }
  if (link.locked) return ASK
  const rule = ruled(deps, req, link, userAgent, language, forwardedFor)
  // A matching rule wins over variants; a HEAD is not a visit and gets the link's own url.
  if (rule !== undefined || link.experiment === undefined || req.method === 'HEAD') {
    const location = rule ?? link.location
    return link.capped ? afterCap(deps, req, code, location) : location
  }
  const variant = variantOf(deps, req, code, link.experiment, userAgent, forwardedFor)
  if (!link.capped) {
    variant.count()
    return variant.location
  }
  const capped = afterCap(deps, req, code, variant.location)
  if (typeof capped === 'string') {
    variant.count()
    return capped
  }
  return capped.then((location) => {
    if (location !== EXHAUSTED) variant.count()
    return location
  })
}

/**
 * The hot path, for a request to `path` (which starts with REDIRECT_PREFIX): a plain one (see
 * readPlain) with a well-formed code is answered here, from the cache at once or after one
 * batched read, with no Reply, no Error and no JSON built. False when it is not plain: the app
 * then dispatches it, and it ends in `redirect` below.
 */
export function servePlain(deps: RedirectDeps, app: Answered, req: IncomingMessage, res: ServerResponse, path: string, started: number): boolean {
  const code = path.slice(REDIRECT_PREFIX.length)
  // Anything but a well-formed code (including "/r/" and "/r/a/b") takes the general path.
  if (!isShortCode(code) || !readPlain(req)) return false
  const requestId = requestIdFor(seen.requestId)
  const known = lookUp(deps, code)
  const answered = () => app.answered(req, path, res.statusCode, started, requestId)
  const failed = (err: unknown) => {
    app.failed(err, req, res, requestId)
    if (res.headersSent) answered()
  }
  if (!(known instanceof Promise)) {
    const page = answer(deps, req, res, code, counted(deps, known, 'hit'), seen.visitor, seen.language, requestId)
    if (page === undefined) answered()
    else {
      trackResponse(req, res)
      page.then(answered, failed)
    }
    return true
  }
  const visitor = { ...seen.visitor } // the scratch object is the next request's
  const language = seen.language
  trackResponse(req, res)
  new Deadline(deps.config.dbTimeoutMs)
    .run(known)
    .then((loaded) => answer(deps, req, res, code, counted(deps, loaded, 'miss'), visitor, language, requestId))
    .then(answered, failed)
  return true
}

/** The page a browser gets for a code that does not redirect (visitor.ts), within the time budget. */
const stoppedPageOf = (deps: RedirectDeps, req: IncomingMessage, code: string, known: Stop): Promise<Reply> =>
  new Deadline(deps.config.dbTimeoutMs).run(stoppedReply(deps, req, code, answerOf(known).page))

/**
 * 302 (a visit, for a GET), 404 or 410 (no visit), written with one writeHead. Only on the way to
 * a 404 or 410 is Accept read: a browser's gets a page, written when it is built (the promise).
 */
function answer(deps: RedirectDeps, req: IncomingMessage, res: ServerResponse, code: string, known: Known, visitor: Visitor, language: string | undefined, requestId: string): void | Promise<void> {
  if (typeof known === 'string') {
    visit(deps, req, code, visitor)
    // A flat header list: only the Location and the request id vary.
    res.writeHead(302, ['location', known, NO_STORE[0], NO_STORE[1], 'content-length', '0', 'x-request-id', requestId, NOSNIFF[0], NOSNIFF[1]])
    res.end()
    return
  }
  if (known instanceof Guarded) {
    const step = pastGuard(deps, req, code, known, visitor.userAgent, language, visitor.forwardedFor)
    if (step === ASK) return wantsPage(req) ? send(res, passwordReply(req, code, 'link', { kind: 'ask' }), { 'x-request-id': requestId }) : sendPrerendered(res, LOCKED, requestId)
    if (step instanceof Promise) {
      const mine = { ...visitor } // on a hit, `visitor` is the scratch object of the next request
      return new Deadline(deps.config.dbTimeoutMs).run(step).then((decided) => answer(deps, req, res, code, decided, mine, language, requestId))
    }
    // Rules alone need no read: answered now, as a plain link is.
    return typeof step === 'object' ? send(res, step.card, { 'x-request-id': requestId }) : answer(deps, req, res, code, step, visitor, language, requestId)
  }
  if (wantsPage(req)) return stoppedPageOf(deps, req, code, known).then((reply) => send(res, reply, { 'x-request-id': requestId }))
  sendPrerendered(res, PRERENDERED.get(known)!, requestId)
}

/** The general path (CORS, a body, no Host...): the same decision, as a Reply or an HttpError. */
export function redirect(ctx: Ctx<Uses>): Reply | Promise<Reply> {
  const code = ctx.param
  if (!isShortCode(code)) {
    if (wantsPage(ctx.req)) return stoppedPageOf(ctx.deps, ctx.req, code, MISSING)
    throw varied(linkNotFound())
  }
  const known = lookUp(ctx.deps, code)
  if (known instanceof Promise) return known.then((loaded) => replyFor(ctx, code, counted(ctx.deps, loaded, 'miss')))
  return replyFor(ctx, code, counted(ctx.deps, known, 'hit'))
}

function replyFor(ctx: Ctx<Uses>, code: string, known: Known): Reply | Promise<Reply> {
  if (known instanceof Guarded) {
    const h = ctx.req.headers
    const step = pastGuard(ctx.deps, ctx.req, code, known, h['user-agent'], h['accept-language'], h['x-forwarded-for'] as string | undefined)
    if (step === ASK) {
      if (wantsPage(ctx.req)) return passwordReply(ctx.req, code, 'link', { kind: 'ask' })
      throw varied(linkPasswordRequired())
    }
    if (step instanceof Promise) return step.then((decided) => replyFor(ctx, code, decided))
    return typeof step === 'object' ? step.card : replyFor(ctx, code, step)
  }
  if (typeof known !== 'string') {
    if (wantsPage(ctx.req)) return stoppedPageOf(ctx.deps, ctx.req, code, known)
    throw varied(answerOf(known).error())
  }
  const h = ctx.req.headers
  // Node joins a repeated X-Forwarded-For with ", ": a string, like every header but Set-Cookie.
  visit(ctx.deps, ctx.req, code, { userAgent: h['user-agent'], referer: h.referer, forwardedFor: h['x-forwarded-for'] as string | undefined, peer: undefined })
  return { status: 302, headers: { location: known, [NO_STORE[0]]: NO_STORE[1] } }
}

/**
 * POST /r/{code}/unlock with {"password"} (JSON or a browser's form): the right password gives what
 * a GET of a link without one would (302 and a visit, or the cap's 410); a wrong one 401 again
 * (the form for a browser). Each try is limited before any hashing, per address and per link
 * (password-limits.ts takeUnlockAttempt): 429 with Retry-After. A link without a password answers
 * as its GET. No cookie: each visit asks again.
 */
export async function unlock(ctx: Ctx<Uses | 'passwords' | 'buckets'>): Promise<Reply> {
  const code = ctx.param
  if (!isShortCode(code)) return redirect(ctx)
  const looked = lookUp(ctx.deps, code)
  const known = counted(ctx.deps, looked instanceof Promise ? await looked : looked, looked instanceof Promise ? 'miss' : 'hit')
  if (!(known instanceof Guarded) || !known.locked) return replyFor(ctx, code, known)
  const { password } = ctx.body
  const page = wantsPage(ctx.req)
  if (password === undefined || password === null || password === '') {
    if (page) return passwordReply(ctx.req, code, 'below', { kind: 'ask' })
    throw varied(linkPasswordRequired())
  }
  if (typeof password !== 'string') throw invalidFields([{ field: 'password', code: 'TYPE', message: 'must be a string' }])
  const address = clientKey(ctx)
  try {
    await takeUnlockAttempt(ctx.deps.buckets, code, address)
  } catch (err) {
    if (page && err instanceof HttpError && err.status === 429) return passwordReply(ctx.req, code, 'below', { kind: 'wait', seconds: Number(err.headers['retry-after']) })
    throw err
  }
  const stored = await findLinkPassword(ctx.deps.sql, code)
  const unlocked = new Guarded(known.location, known.capped, false, undefined, known.rules, known.experiment)
  // Removed meanwhile (the change is on its way to the cache): the link is open.
  if (stored === undefined) return replyFor(ctx, code, unlocked)
  const verdict = await ctx.deadline.excluding(ctx.deps.passwords.verify(password, stored, requester(ctx, `link ${code}`)))
  if (!verdict.ok) {
    await noteFailedLinkPassword(ctx.deps.buckets, code, address)
    if (page) return passwordReply(ctx.req, code, 'below', { kind: 'wrong' })
    throw varied(linkPasswordRequired(true))
  }
  return replyFor(ctx, code, unlocked)
}
