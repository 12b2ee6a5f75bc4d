// What an import checks in each row before writing it: the API's own rules for what a client
// could have sent (users/validate.ts, links/validate.ts, links/hosts.ts), password hashes that
// parse at no more than the configured cost (passwords/phc.ts), counts that are never negative.
// What a link's url determines (its Location form, its hosts) is computed again, never taken.
import { HttpError } from '../http/errors.js'
import { hostOf, normalizeHost } from '../links/hosts.js'
import { MAX_RANK, SKETCH_BYTES } from '../stats/sketch.js'
import { checkStoredLink, checkStoredVariants, toLocation } from '../links/validate.js'
import { parseStored, withinCost, type Argon2Params } from '../passwords/phc.js'
import { EVENTS } from '../webhooks/validate.js'
import { checkStoredAccount } from '../users/validate.js'

/** Columns that count something: whole numbers from 0 (null where the column allows it). */
const COUNTS: Record<string, string[]> = {
  links: ['visits'],
  visit_days: ['humans', 'bots', 'uniques'],
  visit_referrers: ['visits'],
  visit_dims: ['visits'],
  experiment_days: ['visits', 'conversions'],
}

/**
 * Columns an import sets itself: for a live link, its `location`, its `host` (written as
 * host_domains) and its rule targets' hosts (written as rule_domains). What the file says of these
 * is not trusted: a link must not escape the block list by claiming other hosts.
 */
export interface Derived {
  set: Record<string, unknown>
  host?: string
  ruleHosts?: string[]
}

/** A stored password hash this release can check, at no more than the configured cost, or an Error. */
function checkPasswordHash(value: unknown, argon2: Readonly<Argon2Params>): void {
  const hash = typeof value === 'string' ? parseStored(value) : undefined
  if (hash === undefined) throw new Error('password_hash: not a password hash this release can check')
  if (!withinCost(hash, argon2)) {
    const cost = hash.kind === 'argon2id' ? `m=${hash.memoryKiB},t=${hash.iterations}` : `scrypt N=2^${hash.log2N}`
    throw new Error(`password_hash: costs more (${cost}) than ARGON2_MEMORY_KIB=${argon2.memoryKiB} and ARGON2_ITERATIONS=${argon2.iterations} allow`)
  }
}

/**
 * A webhook as the API would have saved it: an http(s) url (each connection is checked against the
 * address rules when it is made), known events, and a secret in its form.
 */
function checkWebhook(row: Record<string, unknown>): void {
  const url = row.url
  let parsed: URL | undefined
  try {
    parsed = typeof url === 'string' && Buffer.byteLength(url) <= 4096 ? new URL(url) : undefined
  } catch {
    parsed = undefined
  }
  if (parsed === undefined || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) throw new Error('url: must be an absolute http or https URL of at most 4096 bytes')
  const events = row.events
  if (!Array.isArray(events) || events.length === 0 || !events.every((e) => (EVENTS as readonly unknown[]).includes(e))) {
    throw new Error(`events: must be a non-empty list of ${EVENTS.join(', ')}`)
  }
  if (typeof row.secret !== 'string' || !/^whsec_[A-Za-z0-9+/]{43}=$/.test(row.secret)) throw new Error('secret: must be "whsec_" and the base64 of 32 bytes')
}

/** Throws an Error whose message says what is wrong with the row; returns what to set in it. */
export function checkRow(table: string, row: Record<string, unknown>, argon2: Readonly<Argon2Params>): Derived | undefined {
  for (const column of COUNTS[table] ?? []) {
    const n = row[column]
    if (!(n === null && column === 'uniques') && !(Number.isSafeInteger(n) && (n as number) >= 0)) {
      throw new Error(`${column}: must be a whole number from 0, not ${JSON.stringify(n)}`)
    }
  }
  if (table === 'users') {
    apiRules(() => checkStoredAccount(row))
    checkPasswordHash(row.password_hash, argon2)
  } else if (table === 'links') {
    apiRules(() => checkStoredLink(row))
    // A link's password is checked by anyone who opens it, unsigned in: the same bounds as an account's.
    if (row.password_hash !== null && row.password_hash !== undefined) checkPasswordHash(row.password_hash, argon2)
    if (typeof row.url !== 'string') return { set: { location: null, host_domains: null } }
    const rules = Array.isArray(row.rules) ? (row.rules as { url: string }[]) : []
    return { set: { location: toLocation(row.url) }, host: hostOf(row.url), ruleHosts: rules.map((r) => hostOf(r.url)) }
  } else if (table === 'link_experiments') {
    // The variants' Location forms and hosts (and so the block list's view of them) are computed again, never taken.
    const variants = validated(() => checkStoredVariants(row))
    const hosts = variants.map((v) => hostOf(v.url))
    return { set: { variants: variants.map((v, i) => ({ ...v, location: toLocation(v.url), host: hosts[i] })), variant_domains: hosts.length === 0 ? null : hosts.flatMap(suffixesOf) } }
  } else if (table === 'experiment_secret') {
    if (typeof row.secret !== 'string' || !/^\\x[0-9a-f]{64}$/.test(row.secret)) throw new Error('secret: must be 32 bytes (hex, as exported)')
  } else if (table === 'conversions_seen') {
    if (typeof row.id !== 'string' || !/^[A-Za-z0-9_-]{22}$/.test(row.id)) throw new Error('id: must be a click id (22 base64url characters)')
  } else if (table === 'visit_days' || table === 'experiment_days') {
    if (row.sketch !== null && row.sketch !== undefined && !isSketch(row.sketch)) {
      throw new Error(`sketch: must be null or ${SKETCH_BYTES} bytes (hex, as exported) of registers from 0 to ${MAX_RANK}`)
    }
  } else if (table === 'webhooks') {
    checkWebhook(row)
  } else if (table === 'blocked_hosts') {
    if (typeof row.host !== 'string' || normalizeHost(row.host) !== row.host) {
      throw new Error(`host: ${JSON.stringify(row.host)} is not a host in the block list's form (link-service block add)`)
    }
  }
  return undefined
}

/** A unique-visitor sketch as row_to_json writes a bytea: "\\x" and its bytes in hex. */
function isSketch(value: unknown): boolean {
  if (typeof value !== 'string' || value.length !== 2 + 2 * SKETCH_BYTES || !/^\\x[0-9a-f]*$/.test(value)) return false
  for (let i = 2; i < value.length; i += 2) if (parseInt(value.slice(i, i + 2), 16) > MAX_RANK) return false
  return true
}

/** Every suffix of a host, itself first, as domains_of (sql/0007) gives them: what the block list matches. */
const suffixesOf = (host: string): string[] => host.split('.').map((_, i, labels) => labels.slice(i).join('.'))

/** The API's 422 as apiRules makes it, and the check's value. */
function validated<T>(check: () => T): T {
  let value: T | undefined
  apiRules(() => {
    value = check()
  })
  return value!
}

/** The API's 422, as the reason a row is refused ("username: must ..."). */
function apiRules(check: () => void): void {
  try {
    check()
  } catch (err) {
    throw err instanceof HttpError ? new Error(err.message) : err
  }
}
