// Threat-feed formats, detected per line: hosts, hosts files, Adblock, URL lists, URLhaus CSV; a
// hostile feed (long lines, public suffixes, too many hosts) parsed in linear time, in slices.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as parse from '../../src/blocklist/parse.js'

const { FeedTooLarge, hostsOfLine, MAX_LINE_CHARS, parseFeed } = parse

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

test('a whole feed: comments (#, !, [header]) and blank lines are skipped, duplicates kept once, invalid lines counted with samples', async () => {
  const feed = await parseFeed(['[Adblock Plus 2.0]', '! Title: mixed', '# comment', '', '||a.example^', '0.0.0.0 b.example', 'a.example', 'http://c.example/x', 'not a host!', 'https://', '\r'].join('\r\n'))
  assert.equal([...feed.hosts].sort(), ['a.example', 'b.example', 'c.example'])
  assert.is(feed.invalid, 2)
  assert.equal(feed.samples, [{ line: 9, text: 'not a host!' }, { line: 10, text: 'https://' }])
  assert.is(feed.lines, 6)
})

test('a feed in chunks of bytes, cut anywhere (inside a line, inside a UTF-8 character), parses as the same text whole', async () => {
  const text = ['\ufeff# BOM first', 'bücher.example', '0.0.0.0 a.example b.example', '', 'https://c.example/x', 'not a host!', 'ü'.repeat(50) + '.example'].join('\r\n')
  const whole = await parseFeed(text)
  const bytes = Buffer.from(text)
  for (const size of [1, 2, 3, 7, 64]) {
    const chunks: Uint8Array[] = []
    for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size))
    const parsed = await parseFeed(chunks)
    assert.equal([...parsed.hosts], [...whole.hosts], `chunks of ${size}`)
    assert.equal([parsed.invalid, parsed.lines, parsed.samples], [whole.invalid, whole.lines, whole.samples], `chunks of ${size}`)
  }
  assert.equal([...whole.hosts].sort(), ['a.example', 'b.example', 'c.example', 'xn--bcher-kva.example', hostsOfLine('ü'.repeat(50) + '.example')![0]!].sort())
  assert.is(whole.invalid, 1)
})

test('a hostile line (480 KB of " #" before a \\r, or a host of 8,000 dots) costs next to nothing, and is counted invalid with a short sample', async () => {
  const hostile = ' #'.repeat(240_000) + '\rx'
  const dots = 'a' + '.'.repeat(8_000) + 'b'
  const started = performance.now()
  // hostsOfLine itself is linear: the whole line, not cut short.
  assert.equal(hostsOfLine('evil.example' + hostile), ['evil.example'])
  assert.is(hostsOfLine(dots), undefined)
  assert.is(hostsOfLine(`http://${dots}/`), undefined)
  const feed = await parseFeed(['good.example', 'evil.example' + hostile, 'y'.repeat(MAX_LINE_CHARS + 1), dots, `http://${dots}/`, 'also-good.example', ''].join('\n'))
  // Seconds before: the comment's regular expression was quadratic in the line (153 s for this line).
  const tookMs = performance.now() - started
  assert.ok(tookMs < 1_000, `took ${Math.round(tookMs)} ms`)
  assert.equal([...feed.hosts].sort(), ['also-good.example', 'good.example'])
  assert.is(feed.invalid, 4)
  assert.equal(feed.samples.map((s) => [s.line, s.text.length <= 120]), [[2, true], [3, true], [4, true], [5, true]])
})

test('a line too long to be read is invalid even when it arrives in many chunks; the next line is read as usual', async () => {
  const chunks = ['first.example\nxx', ...Array.from({ length: 100 }, () => 'y'.repeat(1_000)), 'z\nnext.example\n']
  const feed = await parseFeed(chunks)
  assert.equal([...feed.hosts].sort(), ['first.example', 'next.example'])
  assert.equal([feed.invalid, feed.samples[0]!.line, feed.samples[0]!.text.startsWith('xxyyy')], [1, 2, true])
})

test('an entry that is a public suffix (com, co.uk, a private one such as github.io, a single label) is refused; its subdomains are not', async () => {
  const feed = await parseFeed(['com', 'co.uk', '0.0.0.0 github.io', '||com.^', 'https://co.uk/login', 'zip', 'evil.co.uk', 'phish.github.io', '1.2.3.4', '0.0.0.0 ok.example com'].join('\n'))
  assert.equal([...feed.hosts].sort(), ['1.2.3.4', 'evil.co.uk', 'phish.github.io'])
  assert.equal([feed.suffixes, feed.invalid], [7, 7])
})

test('the parse lets the event loop run: a big feed does not hold it for its whole length', async () => {
  const lines: string[] = []
  for (let i = 0; i < 200_000; i++) lines.push(`0.0.0.0 h${i.toString(36)}.phish-${i % 997}.example`)
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  try {
    const feed = await parseFeed(lines.join('\n'))
    assert.is(feed.hosts.size, 200_000)
  } finally {
    clearInterval(timer)
  }
  // Parsed in one go, no timer could run before the end (0 before).
  assert.ok(ticks >= 2, `ticks: ${ticks}`)
})

test('past its limit of hosts a feed is refused (FeedTooLarge), not cut short', async () => {
  const text = Array.from({ length: 20 }, (_, i) => `h${i}.example`).join('\n')
  assert.is((await parseFeed(text, { maxHosts: 20 })).hosts.size, 20)
  try {
    await parseFeed(text, { maxHosts: 19 })
    assert.unreachable('parsed')
  } catch (err) {
    assert.instance(err, FeedTooLarge)
    assert.is((err as Error).message, 'more than 19 hosts')
  }
})

test.run()
