// Hosts of link targets, in the one form the block list is matched in (sql/0007_abuse_controls.sql):
// the WHATWG URL parser's hostname (lowercase, IDN as punycode, IPv4 in dotted decimal, IPv6 in
// brackets) without a trailing dot, so "Example.COM." and "example.com" are one host.

/** The host of a url that validate.ts accepted. */
export const hostOf = (url: string): string => new URL(url).hostname.replace(/\.$/, '')

/** An operator's host name for the block list in that form, or undefined when it is not a bare host. */
export function normalizeHost(input: string): string | undefined {
  // A scheme, path, port, user-info, query or wildcard is not a host: say so rather than guess.
  if (input === '' || /[\s/\\:@?#*%]/.test(input.replace(/^\[[0-9a-fA-F:.]+\]$/, '[]'))) return undefined
  let parsed: URL
  try {
    parsed = new URL(`http://${input}/`)
  } catch {
    return undefined
  }
  const host = parsed.hostname.replace(/\.$/, '')
  return host === '' || host.startsWith('.') ? undefined : host
}
