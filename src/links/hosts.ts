// Hosts of link targets, in the one form the block list is matched in (sql/0007_abuse_controls.sql):
// the WHATWG URL parser's hostname (lowercase, IDN as punycode, IPv4 in dotted decimal, IPv6 in
// brackets) without trailing dots, and an IPv4 address written as IPv6 as that IPv4 address, so
// "Example.COM..", "example.com", "[::ffff:127.0.0.1]" and "127.0.0.1" are each one host.

/** The host of a url that validate.ts accepted. */
export const hostOf = (url: string): string => canonicalHost(new URL(url).hostname)

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
  const host = canonicalHost(parsed.hostname)
  return host === '' || host.startsWith('.') ? undefined : host
}

/** A URL parser's hostname in the block list's form. */
export function canonicalHost(hostname: string): string {
  const host = hostname.replace(/\.+$/, '')
  return host.startsWith('[') ? embeddedIpv4(host.slice(1, -1)) ?? host : host
}

// An IPv6 address that reaches an IPv4 one: IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96,
// deprecated, but for :: and ::1) and the NAT64 well-known prefix (64:ff9b::/96, RFC 6052). The
// input is the URL parser's serialization: lowercase hex groups, at most one "::", no dotted quad.
function embeddedIpv4(ipv6: string): string | undefined {
  const hex = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)))
  const [head, tail] = ipv6.split('::').map(hex) as [number[], number[] | undefined]
  const g = tail === undefined ? head : [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail]
  const prefix = g.slice(0, 6).join(':')
  const mapped = prefix === '0:0:0:0:0:65535'
  const compatible = prefix === '0:0:0:0:0:0' && (g[6] !== 0 || g[7]! > 1)
  const nat64 = prefix === '100:65435:0:0:0:0'
  return mapped || compatible || nat64 ? [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join('.') : undefined
}
