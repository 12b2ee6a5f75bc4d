// Link fields (spec §2, contract §4).
import { Fields, hasInvisible } from '../http/fields.js'
import { CODE_LENGTH, isShortCode } from './short-code.js'

export const MAX_URL_BYTES = 4096
const URL_RULE = { min: 1, max: MAX_URL_BYTES, unit: 'bytes' } as const
const SCHEME = /^https?:\/\//i
// ASCII space and controls, and every other Unicode control or white-space character.
const SPACE_OR_CONTROL = /[\p{Cc}\p{White_Space}]/u

export interface LinkInput {
  url: string
  code?: string
}

export function parseLinkCreate(body: Record<string, unknown>): LinkInput {
  const f = new Fields(body)
  const url = checkUrl(f, f.string('url', URL_RULE))
  const code = f.optionalString('code', { min: CODE_LENGTH, max: CODE_LENGTH })
  if (code !== undefined && !isShortCode(code)) f.fail('code', 'INVALID', 'must be 8 Base62 characters (0-9, A-Z, a-z)')
  f.check()
  return code === undefined ? { url: url! } : { url: url!, code }
}

export function parseLinkChange(body: Record<string, unknown>): { url: string } {
  const f = new Fields(body)
  const url = checkUrl(f, f.string('url', URL_RULE))
  f.check()
  return { url: url! }
}

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
  // The host must be in the string as sent: the URL parser turns "http:///x" into host "x".
  if (authority === '' || authority.startsWith(':') || parsed.hostname === '') return 'must have a host'
  return undefined
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
