// The referrer of a redirect, as the statistics keep it: only the host of the Referer header,
// never the rest of the URL (which may carry search terms or tokens).

export const DIRECT = 'direct'
export const OTHER = 'other'

const SCHEME = /^[a-z][a-z0-9+.-]*$/i
const HOST_NAME = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/
const IP_LITERAL = /^\[[0-9a-f:.]+\]$/

/**
 * "direct" without a Referer; the lowercase host (no user-info, port or trailing dot) of one;
 * "other" for a Referer we cannot read a host from. Plain string scanning, no URL parser: it
 * runs for every distinct Referer counted.
 */
export function referrerHost(referer: string | undefined): string {
  if (referer === undefined || referer === '') return DIRECT
  // scheme "://" authority; the authority ends at the first / ? or #
  const colon = referer.indexOf('://')
  if (colon < 1 || !SCHEME.test(referer.slice(0, colon))) return OTHER
  const start = colon + 3
  let end = start
  while (end < referer.length) {
    const c = referer.charCodeAt(end)
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) break
    end++
  }
  const at = referer.lastIndexOf('@', end - 1) // user-info ends at the last @
  let host = referer.slice(at >= start ? at + 1 : start, end).toLowerCase()
  if (host.startsWith('[')) host = host.slice(0, host.indexOf(']') + 1)
  else {
    const port = host.indexOf(':')
    if (port !== -1) host = host.slice(0, port)
    if (host.endsWith('.')) host = host.slice(0, -1)
  }
  if (host.length > 253 || !(HOST_NAME.test(host) || IP_LITERAL.test(host))) return OTHER
  return host
}
