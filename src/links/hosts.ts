// Hosts of link targets, in the one form the block list is matched in (host_blocked, domains_of):
// the WHATWG URL parser's hostname (lowercase, IDN as punycode, IPv4 in dotted decimal, IPv6 in
// brackets) without trailing dots, and an IPv4 address written as IPv6 as that IPv4 address, so
// "Example.COM..", "example.com", "[::ffff:127.0.0.1]" and "127.0.0.1" are each one host.
import { ipv4sIn } from '../address.js'

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
  // Trailing dots trimmed by hand: /\.+$/ tries every run of dots, quadratic on a host of dots.
  let end = hostname.length
  while (end > 0 && hostname.charCodeAt(end - 1) === 46 /* . */) end--
  const host = hostname.slice(0, end)
  // An IPv6 address that leads to an IPv4 one is that address (address.ts).
  return host.startsWith('[') ? ipv4sIn(host.slice(1, -1))[0] ?? host : host
}

