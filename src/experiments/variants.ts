// A link's variants: 2 to MAX_VARIANTS destinations, each with a whole weight from 1 to 100. Each
// visitor is sent to one of them by a pure function of the link, the day and the visitor's key
// (the one unique visitors are counted by), so a visitor keeps a variant for the day with no
// cookie and nothing stored about them.
import { createHmac } from 'node:crypto'
import type { Fields } from '../http/fields.js'

export const MIN_VARIANTS = 2
export const MAX_VARIANTS = 10
export const MAX_WEIGHT = 100

/** A variant as stored and returned. */
export interface Variant {
  url: string
  weight: number
}

/** A link's experiment as the redirect cache holds it: Locations and their cumulative weights. */
export interface CachedExperiment {
  /** the variants' Locations; one entry (the link's own) when only conversions are on */
  locations: readonly string[]
  /** running sums of the weights, the last one their total */
  bounds: readonly number[]
  /** each GET redirect carries a click id (click-id.ts) */
  conversions: boolean
}

/**
 * variants: null or [] (none), or an array of MIN_VARIANTS to MAX_VARIANTS {url, weight}; each url
 * is checked by `checkUrl` (the link url's rules) under its own field path ("variants[1].url").
 * Returns [] for null, undefined when absent or invalid (the error is recorded in `f`).
 */
export function parseVariants(f: Fields, value: unknown, checkUrl: (field: string, url: unknown) => string | undefined): Variant[] | undefined {
  if (value === undefined || value === null) return value === null ? [] : undefined
  if (!Array.isArray(value)) return f.fail('variants', 'TYPE', 'must be an array of variants or null')
  if (value.length === 0) return []
  if (value.length < MIN_VARIANTS) return f.fail('variants', 'TOO_SHORT', `must hold at least ${MIN_VARIANTS} variants (or none)`)
  if (value.length > MAX_VARIANTS) return f.fail('variants', 'TOO_LONG', `must hold at most ${MAX_VARIANTS} variants`)
  const variants: Variant[] = []
  let ok = true
  value.forEach((item: unknown, i) => {
    const at = `variants[${i}]`
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      ok = false
      return f.fail(at, 'TYPE', 'must be an object with "url" and "weight"')
    }
    const v = item as Record<string, unknown>
    const url = checkUrl(`${at}.url`, v.url)
    let weight: number | undefined
    if (v.weight === undefined || v.weight === null) f.fail(`${at}.weight`, 'REQUIRED', 'is required')
    else if (typeof v.weight !== 'number' || !Number.isInteger(v.weight)) f.fail(`${at}.weight`, 'TYPE', 'must be a whole number')
    else if (v.weight < 1 || v.weight > MAX_WEIGHT) f.fail(`${at}.weight`, 'INVALID', `must be from 1 to ${MAX_WEIGHT}`)
    else weight = v.weight
    for (const key of Object.keys(v)) if (key !== 'url' && key !== 'weight') f.fail(`${at}.${key}`, 'INVALID', 'is not a field of a variant (url, weight)')
    if (url === undefined || weight === undefined) ok = false
    else variants.push({ url, weight })
  })
  return ok ? variants : undefined
}

/** A flag of the experiment (conversions, promote_winner): a boolean, or undefined when absent or invalid. */
export function parseFlag(f: Fields, body: Record<string, unknown>, name: string): boolean | undefined {
  const value = body[name]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'boolean') return f.fail(name, 'TYPE', 'must be a boolean')
  return value
}

/** The cached form of variants (each url already a Location) or, with none, of the link's own Location. */
export function cachedExperiment(locations: readonly string[], weights: readonly number[], conversions: boolean): CachedExperiment {
  let sum = 0
  return { locations, bounds: weights.map((w) => (sum += w)), conversions }
}

/**
 * The visitor's hash for the day: HMAC-SHA256 under the service's secret of the day, the code and
 * the visitor's key. Uniform, so it both chooses the variant and feeds the variant's sketch of
 * unique visitors; without the secret it says nothing of the visitor.
 */
export function visitorHash(secret: Buffer, dayNumber: number, code: string, visitorKey: string): Buffer {
  return createHmac('sha256', secret).update(`variant\n${dayNumber}\n${code}\n${visitorKey}`).digest()
}

/** The variant a hash falls on: its first 32 bits, scaled to the total weight, against the running sums. */
export function pickVariant(bounds: readonly number[], hash: Uint8Array): number {
  const total = bounds[bounds.length - 1]!
  const x = ((hash[0]! << 24) | (hash[1]! << 16) | (hash[2]! << 8) | hash[3]!) >>> 0
  const point = Math.floor((x / 2 ** 32) * total)
  let i = 0
  while (point >= bounds[i]!) i++
  return i
}
