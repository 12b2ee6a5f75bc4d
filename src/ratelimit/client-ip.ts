// The client address for rate limiting (contract §7): the socket peer, unless the peer is a
// trusted proxy; then the right-most X-Forwarded-For address that is not a trusted proxy.
import type { IncomingMessage } from 'node:http'
import { isIP, type BlockList } from 'node:net'
import { clientKeyOf, unwrapIpv4 } from '../address.js'

/** IPv4-mapped IPv6 (::ffff:1.2.3.4), and any IPv6 that carries an IPv4 address, counts as that address (address.ts). */
const plain = unwrapIpv4

export function clientIp(req: IncomingMessage, trustProxy: BlockList | undefined): string {
  return clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trustProxy)
}

/** The same from the parts of a request, for callers that keep those rather than the request. */
export function clientAddress(
  remoteAddress: string | undefined,
  header: string | string[] | undefined,
  trustProxy: BlockList | undefined,
): string {
  const peer = plain(remoteAddress ?? '')
  if (trustProxy === undefined || !isTrusted(trustProxy, peer)) return peer
  if (header === undefined) return peer
  const hops = (Array.isArray(header) ? header.join(',') : header).split(',')
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = plain(hops[i]!.trim())
    // A malformed entry was not written by a proxy we trust: stop believing the header there.
    if (isIP(hop) === 0) return peer
    if (!isTrusted(trustProxy, hop)) return hop
  }
  return peer
}

// BlockList.check is a native call of about 1 µs, and a redirect with a country rule asks it on
// every visit: its answers for an address are remembered (a proxy has few addresses; the memo is
// emptied when full, as forwarded hops are the client's to choose).
const trustedBy = new WeakMap<BlockList, Map<string, boolean>>()
const TRUST_MEMO = 1_024

function isTrusted(list: BlockList, address: string): boolean {
  let known = trustedBy.get(list)
  if (known === undefined) trustedBy.set(list, (known = new Map()))
  let trusted = known.get(address)
  if (trusted === undefined) {
    const family = isIP(address)
    trusted = family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6')
    if (known.size >= TRUST_MEMO) known.clear()
    known.set(address, trusted)
  }
  return trusted
}

/** The key a client is counted under: its address (contract §7), an IPv6 one by /64. */
export const clientKey = (req: IncomingMessage, trustProxy: BlockList | undefined): string => clientKeyOf(clientIp(req, trustProxy))
