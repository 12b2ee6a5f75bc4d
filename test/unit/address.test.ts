// One address module (src/address.ts): the IPv4 an IPv6 address carries, in every form, and the
// key a client is counted under; used by hosts, webhooks, the client address, geo and the tally.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { clientKeyOf, firstAddressOf, ipv4sIn, ipv6Groups, unwrapIpv4 } from '../../src/address.js'
import { canonicalHost } from '../../src/links/hosts.js'
import { isForbiddenAddress } from '../../src/webhooks/address.js'

test('ipv6Groups reads every text form, a dotted quad and a zone included, and nothing that is not IPv6', () => {
  assert.equal(ipv6Groups('::'), [0, 0, 0, 0, 0, 0, 0, 0])
  assert.equal(ipv6Groups('1::8'), [1, 0, 0, 0, 0, 0, 0, 8])
  assert.equal(ipv6Groups('::ffff:127.0.0.1'), [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1])
  assert.equal(ipv6Groups('fe80::1%eth0'), [0xfe80, 0, 0, 0, 0, 0, 0, 1])
  assert.is(ipv6Groups('127.0.0.1'), undefined)
  assert.is(ipv6Groups('example.com'), undefined)
})

test('ipv4sIn: mapped, translated, compatible, NAT64, 6to4 and Teredo each give their IPv4; other IPv6 none', () => {
  const cases: Array<[string, string[]]> = [
    ['::ffff:127.0.0.1', ['127.0.0.1']],
    ['::ffff:7f00:1', ['127.0.0.1']],
    ['::ffff:0:7f00:1', ['127.0.0.1']], // SIIT's IPv4-translated form
    ['::7f00:1', ['127.0.0.1']],
    ['::1', []],
    ['::', []],
    ['64:ff9b::7f00:1', ['127.0.0.1']],
    ['64:ff9b:1::7f00:1', []], // local-use NAT64: refused whole by the webhooks
    ['2002:7f00:1::1', ['127.0.0.1']],
    ['2001:0:7f00:1::', ['255.255.255.255', '127.0.0.1']],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', ['192.0.2.45', '65.54.227.120']],
    ['2001:db8::1', []],
    ['2606:4700::1111', []],
    ['127.0.0.1', []],
  ]
  for (const [address, v4s] of cases) assert.equal(ipv4sIn(address), v4s, address)
})

test('unwrapIpv4 and clientKeyOf: an IPv4 inside IPv6 is that IPv4, other IPv6 counts by its /64', () => {
  assert.is(unwrapIpv4('::ffff:203.0.113.7'), '203.0.113.7')
  assert.is(unwrapIpv4('2001:db8::1'), '2001:db8::1')
  assert.is(clientKeyOf('::ffff:203.0.113.7'), '203.0.113.7')
  assert.is(clientKeyOf('2001:DB8:0001:0002::5'), '2001:db8:1:2::/64')
  assert.is(firstAddressOf(clientKeyOf('2001:db8:1:2::5')), '2001:db8:1:2::')
  assert.is(firstAddressOf('203.0.113.7'), '203.0.113.7')
})

test('the users of the module agree: the block list\'s host, the webhooks\' address rule', () => {
  for (const literal of ['::7f00:1', '::ffff:0:7f00:1', '2002:7f00:1::1', '2001:0:7f00:1::', '64:ff9b:1::7f00:1', '64:ff9b::a00:1']) {
    assert.ok(isForbiddenAddress(literal), literal)
  }
  assert.not.ok(isForbiddenAddress('2002:5db8:d822::1'), 'a 6to4 address of a public IPv4')
  assert.is(canonicalHost('[2002:7f00:1::1]'), '127.0.0.1')
  assert.is(canonicalHost('[::ffff:7f00:1]'), '127.0.0.1')
})

test.run()
