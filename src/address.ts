// IP addresses, decided once: the IPv4 address an IPv6 one carries, and the key one client is
// counted under (an IPv6 address by its /64). Used by the block list's hosts, the webhooks'
// address rules, the client address of the rate limits, the countries and the visit tally.
import { isIP } from 'node:net'

/** The eight 16-bit groups of an IPv6 address in any text form (a zone and a dotted quad included); undefined for anything else. */
export function ipv6Groups(address: string): number[] | undefined {
  const text = address.split('%')[0]!
  if (isIP(text) !== 6) return undefined
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  const hexText = quad === null ? text : text.slice(0, quad.index) + `${((+quad[1]! << 8) | +quad[2]!).toString(16)}:${((+quad[3]! << 8) | +quad[4]!).toString(16)}`
  const hex = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)))
  const [head, tail] = hexText.split('::').map(hex) as [number[], number[] | undefined]
  return tail === undefined ? head : [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail]
}

const quadOf = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`

/**
 * The IPv4 addresses an IPv6 address leads to, the one it reaches first: IPv4-mapped
 * (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96, SIIT), IPv4-compatible (::/96, deprecated;
 * not :: and ::1), NAT64's well-known prefix (64:ff9b::/96, RFC 6052), 6to4 (2002::/16, RFC 3056)
 * and Teredo (2001::/32, RFC 4380: the client's address, inverted in the last 32 bits, then the
 * server's). Empty for any other address, and for anything not IPv6. (A local-use NAT64 prefix
 * places the IPv4 where its operator chose: the webhooks refuse 64:ff9b:1::/48 whole.)
 */
export function ipv4sIn(address: string): string[] {
  const g = ipv6Groups(address)
  if (g === undefined) return []
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  if (zeros(0, 5) && g[5] === 0xffff) return [quadOf(g[6]!, g[7]!)]
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return [quadOf(g[6]!, g[7]!)]
  if (zeros(0, 6) && (g[6] !== 0 || g[7]! > 1)) return [quadOf(g[6]!, g[7]!)]
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [quadOf(g[6]!, g[7]!)]
  if (g[0] === 0x2002) return [quadOf(g[1]!, g[2]!)]
  if (g[0] === 0x2001 && g[1] === 0) return [quadOf(g[6]! ^ 0xffff, g[7]! ^ 0xffff), quadOf(g[2]!, g[3]!)]
  return []
}

/** An address as the IPv4 it carries (see ipv4sIn), or as given. */
export function unwrapIpv4(address: string): string {
  if (!address.includes(':')) return address
  return ipv4sIn(address)[0] ?? address
}

/**
 * The key one client is counted under: an IPv4 address (also one carried in IPv6) as itself, an
 * IPv6 address by its /64 ("2001:db8:1:2::/64"), the usual size of one site's network: counting
 * each IPv6 address alone would give every client 2^64 of them.
 */
export function clientKeyOf(address: string): string {
  const unwrapped = unwrapIpv4(address)
  const g = ipv6Groups(unwrapped)
  if (g === undefined) return unwrapped
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`
}

/** The first address of a key of clientKeyOf (an IPv6 /64 as its first address), for a look-up. */
export const firstAddressOf = (key: string): string => (key.endsWith('::/64') ? key.slice(0, -3) : key)
