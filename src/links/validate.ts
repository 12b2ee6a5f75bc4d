// Link fields (spec §2, contract §4).
import { Fields, hasInvisible } from '../http/fields.js'
import { canonicalHost } from './hosts.js'
import { parseRules, type Rule } from './rules.js'
import { parseFlag, parseVariants, type Variant } from '../experiments/variants.js'
import { CODE_LENGTH, isShortCode } from './short-code.js'

export const MAX_URL_BYTES = 4096
const URL_RULE = { min: 1, max: MAX_URL_BYTES, unit: 'bytes' } as const
const CODE_RULE = { min: CODE_LENGTH, max: CODE_LENGTH }
const SCHEME = /^https?:\/\//i
// ASCII space and controls, and every other Unicode control or white-space character.
const SPACE_OR_CONTROL = /[\p{Cc}\p{White_Space}]/u

// RFC 3339 date-time (section 5.6), with a T or t and a Z, z or numeric offset; a leap second
// (:60) is refused, as no clock we compare with has one.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/

/** A link's password: 8 to 128 characters (code points), any of them (contract §1's rule for passwords). */
const LINK_PASSWORD_RULE = { min: 8, max: 128, allowNul: true }

const TITLE_RULE = { min: 1, max: 200 }
const DESCRIPTION_RULE = { min: 1, max: 500 }
const CARD_FIELDS = ['title', 'description', 'image_url'] as const

export const MAX_TAGS = 10
export const MAX_TAG_CHARS = 32

/** The largest max_visits: far beyond any real link, within every integer type on the way. */
export const MAX_VISITS_CAP = 1_000_000_000

export interface LinkInput {
  url: string
  code?: string
  /** null: the link never expires */
  expiresAt: Date | null
  /** null: the link works from its creation */
  startsAt: Date | null
  /** null: no cap */
  maxVisits: number | null
  /** null: no password */
  password: string | null
  /** at most MAX_TAGS, no two equal but for case */
  tags: string[]
  /** the preview card: null, none */
  title: string | null
  description: string | null
  imageUrl: string | null
  /** redirect rules (rules.ts), in order; []: none */
  rules: Rule[]
  /** weighted destinations (experiments/variants.ts); []: none */
  variants: Variant[]
  /** each GET redirect carries a click id */
  conversions: boolean
  /** a confident winner becomes the url */
  promoteWinner: boolean
}

export function parseLinkCreate(body: Record<string, unknown>, nowMs = Date.now()): LinkInput {
  const f = new Fields(body)
  const url = checkUrl(f, f.string('url', URL_RULE))
  const code = checkCode(f, f.optionalString('code', CODE_RULE))
  const expiresAt = parseExpiry(f, body.expires_at, nowMs) ?? null
  const startsAt = parseStart(f, body.starts_at, expiresAt ?? undefined) ?? null
  const maxVisits = parseMaxVisits(f, body.max_visits) ?? null
  const password = f.optionalString('password', LINK_PASSWORD_RULE) ?? null
  const tags = parseTags(f, body.tags) ?? []
  const title = f.optionalString('title', TITLE_RULE) ?? null
  const description = f.optionalString('description', DESCRIPTION_RULE) ?? null
  const imageUrl = checkImageUrl(f, f.optionalString('image_url', URL_RULE)) ?? null
  const rules = parseRules(f, body.rules, ruleUrl(f)) ?? []
  const variants = parseVariants(f, body.variants, ruleUrl(f)) ?? []
  const conversions = parseFlag(f, body, 'conversions') ?? false
  const promoteWinner = parseFlag(f, body, 'promote_winner') ?? false
  f.check()
  const input = { url: url!, expiresAt, startsAt, maxVisits, password, tags, title, description, imageUrl, rules, variants, conversions, promoteWinner }
  return code === undefined ? input : { ...input, code }
}

/**
 * A stored link's code, url and redirect rules (a row of an import): the API's rules, the url
 * unless the link is deleted (a tombstone keeps only its code). Its expiry may be past. Throws the API's 422.
 */
export function checkStoredLink(row: Record<string, unknown>): void {
  const f = new Fields(row)
  checkCode(f, f.string('code', CODE_RULE))
  if (row.deleted_at === null || row.deleted_at === undefined) checkUrl(f, f.string('url', URL_RULE))
  // the redirect evaluates what it reads: rules come in only as the API would take them
  if (row.rules !== null && row.rules !== undefined) parseRules(f, row.rules, ruleUrl(f))
  f.check()
}

/**
 * A stored experiment's variants (a row of an import): the API's rules for each, as sent (their
 * url and weight; what is computed from the url is computed again). Throws the API's 422.
 */
export function checkStoredVariants(row: Record<string, unknown>): Variant[] {
  const f = new Fields(row)
  const given = Array.isArray(row.variants) ? row.variants.map((v: { url?: unknown; weight?: unknown } | null) => ({ url: v?.url, weight: v?.weight })) : row.variants
  const variants = parseVariants(f, given, ruleUrl(f))
  if (variants === undefined && Array.isArray(given)) f.fail('variants', 'INVALID', 'must be 2 to 10 variants or none')
  f.check()
  return variants ?? []
}

/** What a PATCH asks: an absent field stays (undefined); null clears expires_at, starts_at or max_visits. */
export interface LinkChangeInput {
  url?: string
  expiresAt?: Date | null
  startsAt?: Date | null
  maxVisits?: number | null
  /** null: remove the password */
  password?: string | null
  /** replaces the tags ([] or null: none) */
  tags?: string[]
  /** the preview card's parts: null clears one */
  title?: string | null
  description?: string | null
  imageUrl?: string | null
  /** replaces the rules ([] or null: none) */
  rules?: Rule[]
  /** replaces the variants ([] or null: none) */
  variants?: Variant[]
  conversions?: boolean
  promoteWinner?: boolean
}

/** The fields a PATCH may clear with null, besides url which it may only replace. */
const CLEARABLE = ['expires_at', 'starts_at', 'max_visits', 'password', 'tags', 'rules', 'variants', ...CARD_FIELDS] as const
/** The experiment's flags: given, they too make a PATCH without url. */
const FLAGS = ['conversions', 'promote_winner'] as const

/** A PATCH: `url`, `expires_at`, `starts_at`, `max_visits`, at least one of them. */
export function parseLinkChange(body: Record<string, unknown>, nowMs = Date.now()): LinkChangeInput {
  const f = new Fields(body)
  const gives = (name: (typeof CLEARABLE)[number]) => Object.hasOwn(body, name)
  let url: string | undefined
  if (CLEARABLE.some(gives) || FLAGS.some((flag) => f.has(flag)) || f.has('url')) url = checkUrl(f, f.optionalString('url', URL_RULE))
  else f.fail('url', 'REQUIRED', 'is required unless another field of the link is given')
  const expiresAt = gives('expires_at') ? parseExpiry(f, body.expires_at, nowMs) : undefined
  const startsAt = gives('starts_at') ? parseStart(f, body.starts_at, expiresAt ?? undefined) : undefined
  const maxVisits = gives('max_visits') ? parseMaxVisits(f, body.max_visits) : undefined
  const password = f.optionalString('password', LINK_PASSWORD_RULE)
  const tags = gives('tags') ? parseTags(f, body.tags) : undefined
  const title = f.optionalString('title', TITLE_RULE)
  const description = f.optionalString('description', DESCRIPTION_RULE)
  const imageUrl = checkImageUrl(f, f.optionalString('image_url', URL_RULE))
  const rules = gives('rules') ? parseRules(f, body.rules, ruleUrl(f)) : undefined
  const variants = gives('variants') ? parseVariants(f, body.variants, ruleUrl(f)) : undefined
  const conversions = parseFlag(f, body, 'conversions')
  const promoteWinner = parseFlag(f, body, 'promote_winner')
  f.check()
  const change: LinkChangeInput = {}
  if (url !== undefined) change.url = url
  if (gives('expires_at')) change.expiresAt = expiresAt ?? null
  if (gives('starts_at')) change.startsAt = startsAt ?? null
  if (gives('max_visits')) change.maxVisits = maxVisits ?? null
  if (gives('password')) change.password = password ?? null
  if (gives('tags')) change.tags = tags ?? []
  if (gives('title')) change.title = title ?? null
  if (gives('description')) change.description = description ?? null
  if (gives('image_url')) change.imageUrl = imageUrl ?? null
  if (gives('rules')) change.rules = rules ?? []
  if (gives('variants')) change.variants = variants ?? []
  if (conversions !== undefined) change.conversions = conversions
  if (promoteWinner !== undefined) change.promoteWinner = promoteWinner
  return change
}

/** A rule's or a variant's url, under its own field path: the link url's rules (type, length, urlProblem). */
const ruleUrl = (f: Fields) => (field: string, url: unknown): string | undefined => {
  if (url === undefined || url === null) return f.fail(field, 'REQUIRED', 'is required')
  if (typeof url !== 'string') return f.fail(field, 'TYPE', 'must be a string')
  const bytes = Buffer.byteLength(url)
  if (bytes < URL_RULE.min || bytes > URL_RULE.max) return f.fail(field, bytes < URL_RULE.min ? 'TOO_SHORT' : 'TOO_LONG', `must be ${URL_RULE.min} to ${URL_RULE.max} bytes`)
  const problem = urlProblem(url)
  return problem === undefined ? url : f.fail(field, 'INVALID', problem)
}

/** image_url: an absolute https URL (the url rules, and https: a card's image is loaded by others' apps). */
function checkImageUrl(f: Fields, url: string | undefined): string | undefined {
  if (url === undefined) return undefined
  const problem = urlProblem(url) ?? (/^https:\/\//i.test(url) ? undefined : 'must be an https URL')
  return problem === undefined ? url : f.fail('image_url', 'INVALID', problem)
}

/** One tag, as a query parameter takes it too: 1 to 32 characters, no control characters, no white space at either end. */
export function tagProblem(tag: string): string | undefined {
  const length = [...tag].length
  if (length < 1 || length > MAX_TAG_CHARS) return `must be 1 to ${MAX_TAG_CHARS} characters`
  if (/\p{Cc}/u.test(tag) || hasInvisible(tag)) return 'must not contain control or invisible characters'
  if (tag.trim() !== tag) return 'must not start or end with white space'
  return undefined
}

/**
 * tags: null, or an array of at most MAX_TAGS tags (tagProblem); a tag given twice (in any case)
 * is kept once, as first written. Returns as parseExpiry does.
 */
function parseTags(f: Fields, value: unknown): string[] | undefined {
  if (value === undefined || value === null) return value === null ? [] : undefined
  if (!Array.isArray(value)) return f.fail('tags', 'TYPE', 'must be an array of strings or null')
  const seen = new Map<string, string>()
  for (const tag of value) {
    if (typeof tag !== 'string') return f.fail('tags', 'TYPE', 'must be an array of strings or null')
    const problem = tagProblem(tag)
    if (problem !== undefined) return f.fail('tags', 'INVALID', `${JSON.stringify(tag.slice(0, 40))}: ${problem}`)
    if (!seen.has(tag.toLowerCase())) seen.set(tag.toLowerCase(), tag)
  }
  if (seen.size > MAX_TAGS) return f.fail('tags', 'TOO_LONG', `must hold at most ${MAX_TAGS} tags`)
  return [...seen.values()]
}

/**
 * starts_at: null, or an RFC 3339 timestamp (a past one starts the link at once), before
 * `expiresAt` when that is given too. Returns as parseExpiry does.
 */
function parseStart(f: Fields, value: unknown, expiresAt: Date | undefined): Date | null | undefined {
  if (value === undefined || value === null) return value === null ? null : undefined
  if (typeof value !== 'string') return f.fail('starts_at', 'TYPE', 'must be a string or null')
  const at = parseTimestamp(value)
  if (at === undefined) return f.fail('starts_at', 'INVALID', 'must be an RFC 3339 timestamp, e.g. 2030-01-31T12:00:00Z')
  if (expiresAt !== undefined && at.getTime() >= expiresAt.getTime()) return f.fail('starts_at', 'INVALID', 'must be before expires_at')
  return at
}

/** max_visits: null, or a whole number from 1 to MAX_VISITS_CAP. Returns as parseExpiry does. */
function parseMaxVisits(f: Fields, value: unknown): number | null | undefined {
  if (value === undefined || value === null) return value === null ? null : undefined
  if (typeof value !== 'number' || !Number.isInteger(value)) return f.fail('max_visits', 'TYPE', 'must be a whole number or null')
  if (value < 1 || value > MAX_VISITS_CAP) return f.fail('max_visits', 'INVALID', `must be from 1 to ${MAX_VISITS_CAP}`)
  return value
}

/**
 * expires_at: null, or an RFC 3339 timestamp in the future. Returns null for null, the instant
 * for a valid one, undefined when invalid (the error is recorded) or absent.
 */
function parseExpiry(f: Fields, value: unknown, nowMs: number): Date | null | undefined {
  if (value === undefined || value === null) return value === null ? null : undefined
  if (typeof value !== 'string') return f.fail('expires_at', 'TYPE', 'must be a string or null')
  const at = parseTimestamp(value)
  if (at === undefined) return f.fail('expires_at', 'INVALID', 'must be an RFC 3339 timestamp, e.g. 2030-01-31T12:00:00Z')
  if (at.getTime() <= nowMs) return f.fail('expires_at', 'INVALID', 'must be in the future')
  return at
}

/** An RFC 3339 date-time as an instant (to the millisecond), or undefined when it is not one. */
export function parseTimestamp(value: string): Date | undefined {
  const m = RFC3339.exec(value)
  if (m === null) return undefined
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const [sign, offsetHours, offsetMinutes] = [m[7], Number(m[8] ?? 0), Number(m[9] ?? 0)]
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) return undefined
  if (offsetHours > 23 || offsetMinutes > 59) return undefined
  if (year < 1) return undefined // PostgreSQL has no year 0
  const ms = Date.parse(value.toUpperCase())
  return Number.isNaN(ms) ? undefined : new Date(ms)
}

// Day 0 of the next month is the last of this one. (Date.UTC reads years 1-99 as 1901-1999,
// which have the same leap years.)
const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate()

/** An absolute http(s) URL with a host, no white space or controls, no user-info. */
export function urlProblem(url: string): string | undefined {
  if (SPACE_OR_CONTROL.test(url)) return 'must not contain white space or control characters'
  // "https://exa\u200Bmple.com" would show one host and lead to another.
  if (hasInvisible(url)) return 'must not contain invisible or bidirectional control characters'
  // The scheme must be spelled out with "//": browsers resolve "http:host" relative to us.
  if (!SCHEME.test(url) || url.includes('\\')) return 'must be an absolute http or https URL'
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'must be an absolute http or https URL'
  }
  const authority = url.slice(url.indexOf('//') + 2).split(/[/?#]/, 1)[0]!
  if (authority.includes('@')) return 'must not contain user-info (user:pass@)'
  // The host must be in the string as sent: the URL parser turns "http:///x" into host "x";
  // "http://../" has only dots, which hosts.ts strips.
  if (authority === '' || authority.startsWith(':') || canonicalHost(parsed.hostname) === '') return 'must have a host'
  return undefined
}

function checkCode(f: Fields, code: string | undefined): string | undefined {
  return code === undefined || isShortCode(code) ? code : f.fail('code', 'INVALID', 'must be 8 Base62 characters (0-9, A-Z, a-z)')
}

function checkUrl(f: Fields, url: string | undefined): string | undefined {
  if (url === undefined) return undefined
  const problem = urlProblem(url)
  return problem === undefined ? url : f.fail('url', 'INVALID', problem)
}

/** The url as a Location header value: non-ASCII percent-encoded as UTF-8, ASCII unchanged. */
export function toLocation(url: string): string {
  return url.replace(/[^\x00-\x7f]+/gu, (run) => encodeURIComponent(run))
}
