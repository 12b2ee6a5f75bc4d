// Redirect rules: up to MAX_RULES ordered rules, each { if: { device?, language?,
// country? }, url }. The first rule whose given conditions all match gives the target; none, the
// link's url. Checked here when written; evaluated in memory from the cache entry on each visit.
import type { Fields } from '../http/fields.js'
import { Memo } from '../stats/memo.js'
import { agentCut, agentDevice } from '../stats/user-agent.js'

export const MAX_RULES = 10
export const DEVICES = ['ios', 'android', 'desktop'] as const
export type RuleDevice = (typeof DEVICES)[number]

export interface RuleCondition {
  device?: RuleDevice
  /** a primary language subtag, lower case ("de") */
  language?: string
  /** ISO 3166-1 alpha-2, upper case ("DE") */
  country?: string
}

/** A rule as stored and returned. */
export interface Rule {
  if: RuleCondition
  url: string
}

/** A rule as the cache holds it: its target as a Location header value. */
export interface CachedRule {
  if: RuleCondition
  location: string
}

/** What a visit offers the rules: each part is worked out only when a rule asks for it. */
export interface Asker {
  userAgent: string | undefined
  acceptLanguage: string | undefined
  /** the client's country (geo.ts), or "unknown" */
  country: () => string
}

const LANGUAGE = /^[a-z]{2,3}$/
const COUNTRY = /^[A-Z]{2}$/
const CONDITIONS = new Set(['device', 'language', 'country'])

/**
 * rules: null (none) or an array of at most MAX_RULES rules; each url is checked by `checkUrl`
 * (the link url's rules) under its own field path ("rules[2].url"). Returns [] for null,
 * undefined when absent or invalid (the error is recorded in `f`).
 */
export function parseRules(f: Fields, value: unknown, checkUrl: (field: string, url: unknown) => string | undefined): Rule[] | undefined {
  if (value === undefined || value === null) return value === null ? [] : undefined
  if (!Array.isArray(value)) return f.fail('rules', 'TYPE', 'must be an array of rules or null')
  if (value.length > MAX_RULES) return f.fail('rules', 'TOO_LONG', `must hold at most ${MAX_RULES} rules`)
  const rules: Rule[] = []
  let ok = true
  value.forEach((rule: unknown, i) => {
    const at = `rules[${i}]`
    if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) {
      ok = false
      return f.fail(at, 'TYPE', 'must be an object with "if" and "url"')
    }
    const r = rule as Record<string, unknown>
    const url = checkUrl(`${at}.url`, r.url)
    const cond = parseCondition(f, `${at}.if`, r.if)
    for (const key of Object.keys(r)) if (key !== 'if' && key !== 'url') f.fail(`${at}.${key}`, 'INVALID', 'is not a field of a rule (if, url)')
    if (url === undefined || cond === undefined) ok = false
    else rules.push({ if: cond, url })
  })
  return ok ? rules : undefined
}

function parseCondition(f: Fields, at: string, value: unknown): RuleCondition | undefined {
  if (value === undefined || value === null) return f.fail(at, 'REQUIRED', 'is required: at least one of device, language, country')
  if (typeof value !== 'object' || Array.isArray(value)) return f.fail(at, 'TYPE', 'must be an object')
  const v = value as Record<string, unknown>
  const cond: RuleCondition = {}
  let ok = true
  for (const key of Object.keys(v)) if (!CONDITIONS.has(key)) ok = f.fail(`${at}.${key}`, 'INVALID', 'is not a condition (device, language, country)') ?? false
  if (v.device !== undefined) {
    if (typeof v.device === 'string' && (DEVICES as readonly string[]).includes(v.device)) cond.device = v.device as RuleDevice
    else ok = f.fail(`${at}.device`, 'INVALID', `must be one of ${DEVICES.join(', ')}`) ?? false
  }
  if (v.language !== undefined) {
    if (typeof v.language === 'string' && LANGUAGE.test(v.language.toLowerCase())) cond.language = v.language.toLowerCase()
    else ok = f.fail(`${at}.language`, 'INVALID', 'must be a primary language subtag of 2 or 3 letters, e.g. "de"') ?? false
  }
  if (v.country !== undefined) {
    if (typeof v.country === 'string' && COUNTRY.test(v.country.toUpperCase())) cond.country = v.country.toUpperCase()
    else ok = f.fail(`${at}.country`, 'INVALID', 'must be an ISO 3166-1 alpha-2 country code, e.g. "DE"') ?? false
  }
  if (ok && Object.keys(cond).length === 0) return f.fail(at, 'REQUIRED', 'must hold at least one of device, language, country')
  return ok ? cond : undefined
}

// Parsing costs microseconds: a busy link sees few distinct agents, so they are remembered.
const devices = new Memo<RuleDevice | undefined>(1000)

/**
 * ios (iPhone, iPad, iPod), android, desktop (neither mobile nor tablet), or undefined (none of
 * them: a bot, a TV...), from the statistics' reading of a User-Agent (user-agent.ts).
 */
export function deviceOf(userAgent: string | undefined): RuleDevice | undefined {
  if (userAgent === undefined || userAgent === '') return undefined
  return devices.get(agentCut(userAgent), (ua) => {
    const { os, device } = agentDevice(ua)
    if (os === 'iOS' || /\b(iPhone|iPad|iPod)\b/.test(ua)) return 'ios'
    if (os === 'Android') return 'android'
    return device === 'desktop' ? 'desktop' : undefined
  })
}

/** The primary subtag (lower case) of the Accept-Language entry with the highest q (the first of equals), or undefined. */
export function languageOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  let best: string | undefined
  let bestQ = 0
  for (const part of header.split(',')) {
    const [range, ...params] = part.split(';')
    const tag = range!.trim()
    let q = 1
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p)
      if (m !== null) q = Number(m[1])
    }
    if (!(q > bestQ) || tag === '*' || tag === '') continue
    const primary = tag.split('-', 1)[0]!.toLowerCase()
    if (!LANGUAGE.test(primary)) continue
    best = primary
    bestQ = q
  }
  return best
}

/** The Location of the first rule that matches, or undefined (the link's own). */
export function ruleTarget(rules: readonly CachedRule[], asker: Asker): string | undefined {
  let device: RuleDevice | undefined | null = null
  let language: string | undefined | null = null
  let country: string | undefined
  for (const rule of rules) {
    const c = rule.if
    if (c.device !== undefined && c.device !== (device === null ? (device = deviceOf(asker.userAgent)) : device)) continue
    if (c.language !== undefined && c.language !== (language === null ? (language = languageOf(asker.acceptLanguage)) : language)) continue
    if (c.country !== undefined && c.country !== (country ??= asker.country())) continue
    return rule.location
  }
  return undefined
}
