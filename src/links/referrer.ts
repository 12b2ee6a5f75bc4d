// The referrer of a redirect, as the statistics keep it: only the host of the Referer header,
// never the rest of the URL (which may carry search terms or tokens).

export const DIRECT = 'direct'
export const OTHER = 'other'

// scheme "://" authority; the authority ends at the first / ? or #
const AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i
const HOST_NAME = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/
const IP_LITERAL = /^\[[0-9a-f:.]+\]$/

/**
 * "direct" without a Referer; the lowercase host (no user-info, port or trailing dot) of one;
 * "other" for a Referer we cannot read a host from.
 */
export function referrerHost(referer: string | undefined): string {
  if (referer === undefined || referer === '') return DIRECT
  const authority = AUTHORITY.exec(referer)?.[1]
  if (authority === undefined) return OTHER
  let host = authority.slice(authority.lastIndexOf('@') + 1).toLowerCase()
  if (host.startsWith('[')) host = host.slice(0, host.indexOf(']') + 1)
  else host = host.split(':', 1)[0]!.replace(/\.$/, '')
  if (host.length > 253 || !(HOST_NAME.test(host) || IP_LITERAL.test(host))) return OTHER
  return host
}
