// Which addresses a webhook may not reach: loopback, private, shared (CGNAT), link-local,
// unspecified, multicast, reserved and documentation ranges, and this machine's own addresses,
// so that an owner cannot make the service call into its own network.
import { BlockList, isIP } from 'node:net'
import { networkInterfaces } from 'node:os'
import { ipv4sIn } from '../address.js'

const V4 = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const
const V6 = [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): translated into a private network
] as const

function forbiddenList(): BlockList {
  const list = new BlockList()
  for (const [net, bits] of V4) list.addSubnet(net, bits, 'ipv4')
  for (const [net, bits] of V6) list.addSubnet(net, bits, 'ipv6')
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) list.addAddress(a.address.split('%')[0]!, a.family === 'IPv4' ? 'ipv4' : 'ipv6')
  }
  return list
}

let list: BlockList | undefined

/** True when a webhook must not connect to this IP address (anything not an IP is refused too). */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return true
  list ??= forbiddenList()
  if (family === 6) {
    // An IPv6 address that leads to IPv4 ones (mapped, NAT64, 6to4, Teredo...) is as forbidden as they are.
    const v4s = ipv4sIn(address)
    if (v4s.length > 0) return v4s.some((v4) => list!.check(v4, 'ipv4'))
  }
  return list.check(address, family === 4 ? 'ipv4' : 'ipv6')
}
