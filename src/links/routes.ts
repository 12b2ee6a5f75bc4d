// /api/v1/links (contract §4): the JSON API of links. The redirect itself lives in redirect.ts.
import { requester, sessionOf, type Ctx } from '../context.js'
import { batchAborted, codeTaken, HttpError, invalidFields, linkLimitExceeded, linkLocked, linkNotFound, rateLimited, unauthorized, urlBlocked } from '../http/errors.js'
import { csv, wantsCsv } from '../http/csv.js'
import { Query } from '../http/query.js'
import { json, noContent, type Reply } from '../http/reply.js'
import { takeLinkPasswordChange } from '../ratelimit/password-limits.js'
import { blockedOf, createRoom, deleteLink, findLink, insertLink, insertLinks, listLinks, listTags, updateLink, type CreateAllowance, type LinkRow } from './queries.js'
import { codeParam, REDIRECT_PREFIX, shortUrl } from './short-code.js'
import { hostOf } from './hosts.js'
import type { Rule } from './rules.js'
import { HEALTH_STATUSES, presentHealth } from './health.js'
import { parseLinkChange, parseLinkCreate, tagProblem, toLocation, type LinkInput } from './validate.js'
import { writeExperiment, type Experiment, type ExperimentChange, type StoredVariant } from '../experiments/queries.js'
import type { Variant } from '../experiments/variants.js'

export const MAX_LINKS_PER_ACCOUNT = 50
/** Items of one bulk create: the cap's size, as no account can take more at once. */
export const MAX_BULK_ITEMS = 50

/** What the link routes may touch. */
type LinksCtx = Ctx<'sql' | 'cache' | 'baseUrl' | 'config' | 'passwords' | 'buckets' | 'linkChecks' | 'forgetLinks' | 'caps'>

/** A link as its owner reads it, visits_left as this node knows it: the database's count and the visits of the block it holds (caps.ts). */
const presentHere = (ctx: LinksCtx, link: LinkRow) => presentLink(ctx.deps.baseUrl, link.visits_left === null ? link : { ...link, visits_left: link.visits_left + ctx.deps.caps.held(link.code) })

export const presentLink = (baseUrl: string, link: LinkRow) => ({
  code: link.code,
  url: link.url,
  short_url: shortUrl(baseUrl, link.code),
  created_at: link.created_at.toISOString(),
  updated_at: link.updated_at.toISOString(),
  visits: link.visits,
  last_visited_at: link.last_visited_at?.toISOString() ?? null,
  expires_at: link.expires_at?.toISOString() ?? null,
  disabled: link.disabled,
  starts_at: link.starts_at?.toISOString() ?? null,
  max_visits: link.max_visits,
  visits_left: link.visits_left,
  password_protected: link.password_protected,
  tags: link.tags,
  title: link.title,
  description: link.description,
  image_url: link.image_url,
  rules: link.rules ?? [],
  health: presentHealth(link.health),
  variants: (link.experiment?.variants ?? []).map((v) => ({ url: v.url, weight: v.weight })),
  conversions: link.experiment?.conversions ?? false,
  promote_winner: link.experiment?.promote_winner ?? false,
})

/** Variants as stored: each url with its Location form and host, computed once, on write. */
const storedOf = (variants: readonly Variant[]): StoredVariant[] => variants.map((v) => ({ url: v.url, weight: v.weight, location: toLocation(v.url), host: hostOf(v.url) }))

/** The experiment part of a create or PATCH, as experiments/queries.ts writes it; undefined when it asks for none. */
function experimentChange(variants: readonly Variant[] | undefined, conversions: boolean | undefined, promoteWinner: boolean | undefined): ExperimentChange | undefined {
  if (variants === undefined && conversions === undefined && promoteWinner === undefined) return undefined
  return { ...(variants === undefined ? {} : { variants: storedOf(variants) }), ...(conversions === undefined ? {} : { conversions }), ...(promoteWinner === undefined ? {} : { promoteWinner }) }
}

const withExperiment = (link: LinkRow, e: Experiment | undefined): LinkRow => ({
  ...link,
  experiment: e === undefined ? null : { variants: e.variants, conversions: e.conversions, promote_winner: e.promoteWinner },
})

/**
 * Variant urls follow the link url's rules: none leads to one of our short links (422 on
 * "variants[i].url"), none has a blocked host (422 URL_BLOCKED naming each).
 */
async function refuseBadVariants(ctx: LinksCtx, variants: readonly Variant[] | undefined): Promise<void> {
  if (variants === undefined || variants.length === 0) return
  variants.forEach((v, i) => refuseOwnShortLink(v.url, ctx.deps.baseUrl, `variants[${i}].url`))
  const blocked = await blockedOf(ctx.deps.sql, variants.map((v) => hostOf(v.url)))
  const named = variants.map((_, i) => `variants[${i}].url`).filter((_, i) => blocked[i])
  if (named.length > 0) throw urlBlocked(named)
}

/** A link's password as stored: argon2id through the KDF pool, on the owner's turn. */
const hashOf = (ctx: LinksCtx, password: string): Promise<string> =>
  ctx.deadline.excluding(ctx.deps.passwords.hash(password, requester(ctx, `user ${sessionOf(ctx).userId}`)))

/**
 * A url that leads to one of our own short links hides its destination behind a chain (and would
 * escape the block list): 422 on the url field. Ours: the host of BASE_URL, whatever the scheme
 * or port, and a path under /r/.
 */
function refuseOwnShortLink(url: string, baseUrl: string, field = 'url'): void {
  if (hostOf(url) === hostOf(baseUrl) && new URL(url).pathname.startsWith(REDIRECT_PREFIX)) {
    throw invalidFields([{ field, code: 'INVALID', message: `must not point at a short link of this service (${baseUrl}${REDIRECT_PREFIX}...)` }])
  }
}

/** A card's image is loaded from its host by others' apps: one on the block list is refused as a url is (422 on image_url). */
async function refuseBlockedImage(ctx: LinksCtx, imageUrl: string | null | undefined): Promise<void> {
  if (imageUrl === null || imageUrl === undefined) return
  const [blocked] = await blockedOf(ctx.deps.sql, [hostOf(imageUrl)])
  if (blocked) throw urlBlocked(['image_url'])
}

/**
 * After a refusal for a blocked host, which urls have one: the link's url and its rules' targets
 * ("rules[2].url"). The link's url alone when none has any more (the list changed meanwhile).
 */
async function blockedFields(ctx: LinksCtx, url: string | undefined, rules: readonly Rule[]): Promise<string[]> {
  const fields = [...(url === undefined ? [] : ['url']), ...rules.map((_, i) => `rules[${i}].url`)]
  const urls = [...(url === undefined ? [] : [url]), ...rules.map((r) => r.url)]
  const blocked = await blockedOf(ctx.deps.sql, urls.map(hostOf))
  const named = fields.filter((_, i) => blocked[i])
  return named.length === 0 ? ['url'] : named
}

/** The account's allowance of creates, taken in the create's own statement, across every node. */
const allowanceOf = (config: LinksCtx['deps']['config']): CreateAllowance =>
  ({ burst: config.linkCreateBurst, perMinute: config.linkCreatePerMinute, youngHours: config.newAccountHours })

export async function createLink(ctx: LinksCtx): Promise<Reply> {
  const session = sessionOf(ctx)
  const input = parseLinkCreate(ctx.body)
  const { sql, cache, baseUrl, config } = ctx.deps
  refuseOwnShortLink(input.url, baseUrl)
  input.rules.forEach((rule, i) => refuseOwnShortLink(rule.url, baseUrl, `rules[${i}].url`))
  await refuseBlockedImage(ctx, input.imageUrl)
  await refuseBadVariants(ctx, input.variants)
  const experiment = input.variants.length > 0 || input.conversions ? experimentChange(input.variants, input.conversions, input.promoteWinner) : undefined
  // A password is hashed before the create's statement: not for a create the cap or the limit refuses.
  if (input.password !== null) {
    const room = await createRoom(sql, session.userId, MAX_LINKS_PER_ACCOUNT, allowanceOf(config))
    if (room === 'limit') throw linkLimitExceeded(MAX_LINKS_PER_ACCOUNT)
    if (room !== 'ok') throw rateLimited(room.retryAfterSeconds)
  }
  const passwordHash = input.password === null ? null : await hashOf(ctx, input.password)
  // The link and its experiment commit together: a redirect never sees one without the other.
  const result = await ctx.effect(async (tx) => {
    const created = await insertLink(tx, session.userId, { ...input, location: toLocation(input.url), host: hostOf(input.url), passwordHash }, MAX_LINKS_PER_ACCOUNT, allowanceOf(config))
    return typeof created === 'object' && 'code' in created && experiment !== undefined ? withExperiment(created, await writeExperiment(tx, created.code, experiment)) : created
  })
  if (result === 'no-user') throw unauthorized()
  if (result === 'blocked') throw urlBlocked(await blockedFields(ctx, input.url, input.rules))
  if (result === 'limit') throw linkLimitExceeded(MAX_LINKS_PER_ACCOUNT)
  if (result === 'taken') throw codeTaken()
  if ('retryAfterSeconds' in result) throw rateLimited(result.retryAfterSeconds)
  cache.invalidate(result.code)
  ctx.deps.linkChecks?.wake() // its first check was queued with it
  return json(201, presentLink(baseUrl, result), { location: `/api/v1/links/${result.code}` })
}

/** A bulk create takes url, code and expires_at; a start, a cap, a password, tags, a card or rules are set with a single create or a PATCH. */
function refuseLimitsInBulk(input: LinkInput): void {
  const fields = [
    ...(input.startsAt === null ? [] : ['starts_at']),
    ...(input.maxVisits === null ? [] : ['max_visits']),
    ...(input.password === null ? [] : ['password']),
    ...(input.tags.length === 0 ? [] : ['tags']),
    ...(input.title === null ? [] : ['title']),
    ...(input.description === null ? [] : ['description']),
    ...(input.imageUrl === null ? [] : ['image_url']),
    ...(input.rules.length === 0 ? [] : ['rules']),
    ...(input.variants.length === 0 ? [] : ['variants']),
    ...(input.conversions ? ['conversions'] : []),
    ...(input.promoteWinner ? ['promote_winner'] : []),
  ]
  if (fields.length > 0) throw invalidFields(fields.map((field) => ({ field, code: 'INVALID' as const, message: 'is not taken by a bulk create: create the link alone, or PATCH it' })))
}

/** An item's failure, as its own result: the error shape of a single create. */
const itemError = (err: HttpError) => ({
  status: err.status,
  error: { code: err.code, message: err.message, ...(err.errors === undefined ? {} : { errors: err.errors }) },
})

/**
 * POST /api/v1/links/bulk: { items: [{ url, code?, expires_at? }, ...], atomic? } → 200 with one
 * result per item, in order. Each item is checked as a single create would be; the valid ones
 * are created in one call. With atomic, one failure means none is created.
 */
export async function createLinks(ctx: LinksCtx): Promise<Reply> {
  const session = sessionOf(ctx)
  const { items, atomic } = ctx.body
  if (!Array.isArray(items)) throw invalidFields([{ field: 'items', code: items === undefined || items === null ? 'REQUIRED' : 'TYPE', message: items === undefined || items === null ? 'is required' : 'must be an array' }])
  if (items.length === 0) throw invalidFields([{ field: 'items', code: 'TOO_SHORT', message: 'must hold at least 1 item' }])
  if (items.length > MAX_BULK_ITEMS) throw invalidFields([{ field: 'items', code: 'TOO_LONG', message: `must hold at most ${MAX_BULK_ITEMS} items` }])
  if (atomic !== undefined && atomic !== null && typeof atomic !== 'boolean') throw invalidFields([{ field: 'atomic', code: 'TYPE', message: 'must be a boolean' }])
  const checked: Array<LinkInput | HttpError> = items.map((item: unknown) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return invalidFields([{ field: 'item', code: 'TYPE', message: 'must be an object' }])
    try {
      const input = parseLinkCreate(item as Record<string, unknown>)
      refuseOwnShortLink(input.url, ctx.deps.baseUrl)
      refuseLimitsInBulk(input)
      return input
    } catch (err) {
      if (err instanceof HttpError) return err
      throw err
    }
  })
  const valid = checked.filter((c): c is LinkInput => !(c instanceof HttpError))
  const failed = valid.length < checked.length
  const { sql, cache, baseUrl, config } = ctx.deps
  const outcomes =
    valid.length === 0 || (atomic === true && failed)
      ? valid.map(() => 'aborted' as const)
      : await ctx.effect((tx) => insertLinks(tx, session.userId, valid.map((v) => ({ ...v, location: toLocation(v.url), host: hostOf(v.url) })), MAX_LINKS_PER_ACCOUNT, atomic === true, allowanceOf(config)))
  if (outcomes === 'no-user') throw unauthorized()
  let next = 0
  const results = checked.map((c) => {
    if (c instanceof HttpError) return itemError(c)
    const r = outcomes[next++]!
    if (r === 'blocked') return itemError(urlBlocked())
    if (r === 'limit') return itemError(linkLimitExceeded(MAX_LINKS_PER_ACCOUNT))
    if (r === 'taken') return itemError(codeTaken())
    if (r === 'aborted') return itemError(batchAborted())
    if ('retryAfterSeconds' in r) return { ...itemError(rateLimited(r.retryAfterSeconds)), retry_after: r.retryAfterSeconds }
    cache.invalidate(r.code)
    return { status: 201, link: presentLink(baseUrl, r) }
  })
  if (next > 0) ctx.deps.linkChecks?.wake()
  return json(200, { results })
}

/** The longest search: a url is at most 4,096 bytes, and no substring of one is longer. */
const MAX_SEARCH_CHARS = 4096

/** GET /api/v1/tags: the caller's tags, each with how many of their links carry it. */
export async function getTags(ctx: LinksCtx): Promise<Reply> {
  return json(200, { tags: await listTags(ctx.deps.sql, sessionOf(ctx).userId) })
}

const LINK_COLUMNS = ['code', 'url', 'short_url', 'created_at', 'updated_at', 'visits', 'last_visited_at', 'expires_at', 'disabled', 'starts_at', 'max_visits', 'visits_left', 'password_protected', 'health'] as const

export async function getLinks(ctx: LinksCtx): Promise<Reply> {
  const q = new Query(ctx.req.url)
  const format = q.oneOf('format', ['json', 'csv'] as const)
  const tag = q.string('tag')
  const search = q.string('q')
  const health = q.oneOf('health', HEALTH_STATUSES)
  const problem = tag === undefined ? undefined : tagProblem(tag)
  if (problem !== undefined) q.fail('tag', 'INVALID', problem)
  if (search !== undefined && [...search].length > MAX_SEARCH_CHARS) q.fail('q', 'TOO_LONG', `must be at most ${MAX_SEARCH_CHARS} characters`)
  q.check()
  const filter = { ...(tag === undefined ? {} : { tag }), ...(search === undefined ? {} : { q: search }), ...(health === undefined ? {} : { health }) }
  const links = (await listLinks(ctx.deps.sql, sessionOf(ctx).userId, filter)).map((l) => presentHere(ctx, l))
  if (!wantsCsv(format, ctx.req.headers.accept)) return json(200, { links })
  const rows = links.map((l) => LINK_COLUMNS.map((c) => (c === 'health' ? l.health.status : typeof l[c] === 'boolean' ? String(l[c]) : l[c])))
  return csv([[...LINK_COLUMNS], ...rows], 'links.csv')
}

export async function getLink(ctx: LinksCtx): Promise<Reply> {
  const code = codeParam(ctx)
  const link = await findLink(ctx.deps.sql, sessionOf(ctx).userId, code)
  if (link === undefined) throw linkNotFound()
  return json(200, presentHere(ctx, link))
}

export async function patchLink(ctx: LinksCtx): Promise<Reply> {
  const session = sessionOf(ctx)
  const { url, password, variants, conversions, promoteWinner, ...rest } = parseLinkChange(ctx.body) // field validation comes before the look-up (contract §2)
  const code = codeParam(ctx)
  if (url !== undefined) refuseOwnShortLink(url, ctx.deps.baseUrl)
  rest.rules?.forEach((rule, i) => refuseOwnShortLink(rule.url, ctx.deps.baseUrl, `rules[${i}].url`))
  await refuseBlockedImage(ctx, rest.imageUrl)
  await refuseBadVariants(ctx, variants)
  const experiment = experimentChange(variants, conversions, promoteWinner)
  if (typeof password === 'string') await takeLinkPasswordChange(ctx.deps.buckets, session.userId)
  const passwordHash = password === undefined || password === null ? password : await hashOf(ctx, password)
  const change = { url: url === undefined ? undefined : { url, location: toLocation(url), host: hostOf(url) }, ...rest, passwordHash }
  // The link row carries its experiment; a change of the experiment commits with the link's.
  const link = experiment === undefined
    ? await updateLink(ctx.deps.sql, session.userId, code, change)
    : await ctx.deps.sql.begin(async (tx) => {
        const updated = await updateLink(tx, session.userId, code, change)
        return typeof updated !== 'object' ? updated : withExperiment(updated, await writeExperiment(tx, code, experiment))
      })
  if (link === 'not-found') throw linkNotFound()
  // An operator's decision stands: the owner may delete the link, not change it.
  if (link === 'disabled') throw linkLocked()
  if (link === 'blocked') throw urlBlocked(await blockedFields(ctx, url, rest.rules ?? []))
  const presented = presentHere(ctx, link) // before the change gives this node's block back
  ctx.deps.forgetLinks([code])
  if (url !== undefined || rest.rules !== undefined) ctx.deps.linkChecks?.wake()
  return json(200, presented)
}

export async function removeLink(ctx: LinksCtx): Promise<Reply> {
  const code = codeParam(ctx)
  if (!(await deleteLink(ctx.deps.sql, sessionOf(ctx).userId, code))) throw linkNotFound()
  ctx.deps.forgetLinks([code])
  return noContent()
}
