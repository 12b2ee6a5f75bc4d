// Hosts of link targets (src/links/hosts.ts): the one form in which links and the block list are
// matched, so that letter case, a trailing dot or an IDN spelling cannot slip past.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { canonicalHost, hostOf, normalizeHost } from '../../src/links/hosts.js'

test('a link\'s host is the URL parser\'s: lowercase, punycode, no port, no trailing dot', () => {
  assert.is(hostOf('https://WWW.Example.COM.:8443/a?b#c'), 'www.example.com')
  assert.is(hostOf('http://bücher.example/'), 'xn--bcher-kva.example')
  assert.is(hostOf('http://[::1]:8080/'), '[::1]')
  assert.is(hostOf('http://0x7f.1/'), '127.0.0.1')
})

test('an operator\'s host is taken in the same form as a link\'s', () => {
  assert.is(normalizeHost('Example.COM.'), 'example.com')
  assert.is(normalizeHost('BÜCHER.example'), 'xn--bcher-kva.example')
  assert.is(normalizeHost('[::1]'), '[::1]')
  assert.is(normalizeHost('127.0.0.1'), '127.0.0.1')
})

// The forms that got past the block list before: more than one trailing dot, and an IPv4 address
// written as IPv6. Each must be the host it reaches, for a link's url and for an operator's host.
const CANONICAL_HOSTS: Array<[string, string]> = [
  ['evil.com..', 'evil.com'],
  ['Evil.COM...', 'evil.com'],
  ['[::ffff:127.0.0.1]', '127.0.0.1'],
  ['[::ffff:7f00:1]', '127.0.0.1'],
  ['[0:0:0:0:0:FFFF:7F00:0001]', '127.0.0.1'],
  ['[::10.0.0.1]', '10.0.0.1'],
  ['[::a00:1]', '10.0.0.1'],
  ['[64:ff9b::10.0.0.1]', '10.0.0.1'],
  ['[64:FF9B:0::A00:1]', '10.0.0.1'],
  // IPv6 that reaches no IPv4 address stays as the parser writes it
  ['[::1]', '[::1]'],
  ['[::]', '[::]'],
  ['[2001:db8::10.0.0.1]', '[2001:db8::a00:1]'],
  ['[64:ff9b:1::a00:1]', '[64:ff9b:1::a00:1]'],
  ['[::ffff:0:a00:1]', '10.0.0.1'],
]

test('one canonical host: all trailing dots stripped, IPv4 written as IPv6 (mapped, compatible, NAT64) is the IPv4 address', () => {
  for (const [form, host] of CANONICAL_HOSTS) {
    assert.is(hostOf(`https://${form}/x`), host, `url ${form}`)
    assert.is(hostOf(`https://${form}:8443/x`), host, `url ${form} with a port`)
    assert.is(normalizeHost(form), host, `block ${form}`)
  }
})

test('anything but a bare host is refused rather than guessed at', () => {
  for (const bad of ['', 'https://example.com', 'example.com/path', 'example.com:80', 'user@example.com', '*.example.com', 'exa mple.com', '.example.com', '.', '..', 'a%41.com', 'ex?ample', '[::1', 'example.com#x']) {
    assert.is(normalizeHost(bad), undefined, JSON.stringify(bad))
  }
})

test('a host of thousands of dots is trimmed in linear time (a regex on trailing dots was quadratic: 98 ms for 16,000)', () => {
  const dots = `a${'.'.repeat(200_000)}b`
  const started = performance.now()
  assert.is(canonicalHost(dots), dots)
  assert.is(canonicalHost(`${'.'.repeat(200_000)}`), '')
  assert.ok(performance.now() - started < 200, `${(performance.now() - started).toFixed(0)} ms`)
})

test.run()
