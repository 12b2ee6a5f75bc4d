// Threat-feed formats, detected per line: hosts, hosts files, Adblock, URL lists, URLhaus CSV.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { hostsOfLine, parseFeed } from '../../src/blocklist/parse.js'

test('one host per line, in the block list\'s form: lowercase, no trailing dot, IDN as punycode, a wildcard as its domain', () => {
  assert.equal(hostsOfLine('Evil.Example.'), ['evil.example'])
  assert.equal(hostsOfLine('  bad-host_1.example  '), ['bad-host_1.example'])
  assert.equal(hostsOfLine('bücher.example'), ['xn--bcher-kva.example'])
  assert.equal(hostsOfLine('*.wild.example'), ['wild.example'])
  assert.equal(hostsOfLine('192.168.000.001'), ['192.168.0.1'])
  assert.equal(hostsOfLine('host.example # why it is listed'), ['host.example'])
})

test('hosts files: 0.0.0.0 and 127.0.0.1 lines, several names a line; the machine\'s own names are noise, not errors', () => {
  assert.equal(hostsOfLine('0.0.0.0 ads.example'), ['ads.example'])
  assert.equal(hostsOfLine('127.0.0.1\ta.example b.example  # two'), ['a.example', 'b.example'])
  assert.equal(hostsOfLine('::1 localhost ip6-localhost'), [])
  assert.equal(hostsOfLine('127.0.0.1 localhost'), [])
  assert.is(hostsOfLine('10.1.2.3 intranet.example'), undefined, 'a real address is a local override, not a block')
})

test('Adblock rules ||host^ (options allowed); exceptions and cosmetic rules are not hosts', () => {
  assert.equal(hostsOfLine('||phish.example^'), ['phish.example'])
  assert.equal(hostsOfLine('||Tracker.Example^$third-party'), ['tracker.example'])
  assert.is(hostsOfLine('@@||good.example^'), undefined)
  assert.is(hostsOfLine('||bad.example/path^'), undefined)
  assert.is(hostsOfLine('example.com##.banner'), undefined)
})

test('URL lists and URLhaus CSV give the host of the URL (the CSV\'s first URL field, not its link to URLhaus)', () => {
  assert.equal(hostsOfLine('http://malware.example:8080/bins/x86'), ['malware.example'])
  assert.equal(hostsOfLine('https://[2001:db8::1]/x'), ['[2001:db8::1]'])
  const csv = '"3164599","2024-08-29 09:13:07","http://1.2.3.4:5555/i","online","2024-08-29 09:13:07","malware_download","elf,mozi","https://urlhaus.abuse.ch/url/3164599/","abuse_ch"'
  assert.equal(hostsOfLine(csv), ['1.2.3.4'])
  assert.equal(hostsOfLine('"1","2024-01-01","https://Drop.Example/a.exe","offline","","malware_download","""quoted""",""'), ['drop.example'])
  assert.is(hostsOfLine('"1","2024-01-01","not a url"'), undefined)
})

test('a whole feed: comments (#, !, [header]) and blank lines are skipped, duplicates kept once, invalid lines counted with samples', () => {
  const feed = parseFeed(['[Adblock Plus 2.0]', '! Title: mixed', '# comment', '', '||a.example^', '0.0.0.0 b.example', 'a.example', 'http://c.example/x', 'not a host!', 'https://', '\r'].join('\r\n'))
  assert.equal([...feed.hosts].sort(), ['a.example', 'b.example', 'c.example'])
  assert.is(feed.invalid, 2)
  assert.equal(feed.samples, [{ line: 9, text: 'not a host!' }, { line: 10, text: 'https://' }])
})

test.run()
