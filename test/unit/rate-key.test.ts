// contract §7: one bucket per client IP. IPv6 addresses count per /64 (one site's network), so
// an attacker with a /64 cannot get a fresh bucket for every request.
import { BlockList } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { clientKeyOf as rateLimitKey } from '../../src/address.js'
import { clientAddress } from '../../src/ratelimit/client-ip.js'

test('IPv4 addresses are their own key', () => {
  assert.is(rateLimitKey('203.0.113.7'), '203.0.113.7')
  assert.is(rateLimitKey('10.0.0.1'), '10.0.0.1')
})

test('IPv6 addresses in one /64 share a key, whatever their spelling', () => {
  const key = rateLimitKey('2001:db8:1:2::1')
  assert.is(key, '2001:db8:1:2::/64')
  for (const same of ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002:0:0:0:9', '2001:DB8:1:2:a::b']) {
    assert.is(rateLimitKey(same), key, same)
  }
})

test('IPv6 addresses in different /64s get different keys', () => {
  assert.is.not(rateLimitKey('2001:db8:1:2::1'), rateLimitKey('2001:db8:1:3::1'))
  assert.is(rateLimitKey('::1'), '0:0:0:0::/64')
  assert.is(rateLimitKey('fe80::1'), 'fe80:0:0:0::/64')
  assert.is(rateLimitKey('1::'), '1:0:0:0::/64')
  assert.is(rateLimitKey('1:2:3:4:5:6:7:8'), '1:2:3:4::/64')
  assert.is(rateLimitKey('1:2:3::4:1.2.3.4'), '1:2:3:0::/64')
})

test('an IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4) counts as that IPv4 address', () => {
  assert.is(rateLimitKey('::ffff:192.0.2.1'), '192.0.2.1')
  assert.is(rateLimitKey('64:ff9b::192.0.2.1'), '192.0.2.1')
  assert.is(rateLimitKey('2002:c000:201::1'), '192.0.2.1')
})

test('TRUST_PROXY: a trusted peer\'s X-Forwarded-For names the client, an untrusted one\'s is ignored, for thousands of addresses in turn (the trust memo empties and refills)', () => {
  const trust = new BlockList()
  trust.addSubnet('10.0.0.0', 8)
  const other = new BlockList()
  other.addAddress('192.0.2.9')
  for (let i = 0; i < 3_000; i++) {
    const proxy = `10.0.${(i >> 8) & 255}.${i & 255}`
    const stranger = `198.51.${(i >> 8) & 255}.${i & 255}`
    assert.is(clientAddress(proxy, '203.0.113.5', trust), '203.0.113.5', proxy)
    assert.is(clientAddress(stranger, '203.0.113.5', trust), stranger, stranger)
    // A hop the list trusts is skipped; the first untrusted one from the right is the client.
    assert.is(clientAddress(proxy, `203.0.113.6, ${proxy}`, trust), '203.0.113.6')
  }
  // Each list answers for itself.
  assert.is(clientAddress('10.0.0.1', '203.0.113.5', other), '10.0.0.1')
  assert.is(clientAddress('::ffff:192.0.2.9', '203.0.113.5', other), '203.0.113.5')
})

test.run()
