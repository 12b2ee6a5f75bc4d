// Hosts of link targets (src/links/hosts.ts): the one form in which links and the block list are
// matched, so that letter case, a trailing dot or an IDN spelling cannot slip past.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { hostOf, normalizeHost } from '../../src/links/hosts.js'

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

test('anything but a bare host is refused rather than guessed at', () => {
  for (const bad of ['', 'https://example.com', 'example.com/path', 'example.com:80', 'user@example.com', '*.example.com', 'exa mple.com', '.example.com', '.', 'a%41.com', 'ex?ample', '[::1', 'example.com#x']) {
    assert.is(normalizeHost(bad), undefined, JSON.stringify(bad))
  }
})

test.run()
