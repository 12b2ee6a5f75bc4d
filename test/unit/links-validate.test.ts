// Link field validation (spec §2, §8; contract §1, §2, §4) and short codes (spec §2, contract §4).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { generateCode, isShortCode } from '../../src/links/short-code.js'
import { parseLinkChange, parseLinkCreate, toLocation, urlProblem } from '../../src/links/validate.js'
import { urlOfBytes } from '../helpers/api.js'
import { fieldErrors } from '../helpers/fields.js'

/** The [field, code] pairs of the 422 a parser throws for input it must refuse. */
function fieldCodes(fn: () => unknown): Array<[string, string]> {
  return fieldErrors(fn).map((e) => [e.field, e.code])
}

const ACCEPTED = [
  'https://example.com/',
  'http://example.com',
  'HTTPS://EXAMPLE.COM/x',
  'Http://Example.com/Path',
  'http://127.0.0.1/',
  'http://192.168.0.1:8080/x',
  'http://[::1]:3000/',
  'https://[2001:db8::1]/a',
  'https://example.com:8443/a',
  'https://exämple.com/ü',
  'https://xn--exmple-cua.com/',
  'https://例え.テスト/パス',
  'https://example.com/a?b=c&d=e#frag',
  'https://example.com/?q=a%20b',
  'https://example.com/#',
]

const REJECTED: Array<[string, string]> = [
  ['ftp', 'ftp://example.com/file'],
  ['javascript', 'javascript:alert(1)'],
  ['mailto', 'mailto:a@example.com'],
  ['relative path', '/x'],
  ['scheme-relative', '//example.com/x'],
  ['no slashes after the scheme', 'http:example.com'],
  ['one slash after the scheme', 'http:/example.com'],
  ['scheme only', 'http://'],
  ['no host', 'https://?q=1'],
  ['empty host, path after three slashes', 'http:///x'],
  ['empty host, four slashes', 'https:////example.com/'],
  ['empty host with a port', 'http://:8080/x'],
  ['a host of dots only', 'https://../x'],
  ['host-less file', 'file:///etc/passwd'],
  ['backslash', 'https:\\\\example.com\\x'],
  ['space inside', 'https://example.com/a b'],
  ['leading space', ' https://example.com/'],
  ['trailing space', 'https://example.com/ '],
  ['tab', 'https://example.com/\tx'],
  ['newline', 'https://example.com/\nx'],
  ['carriage return', 'https://example.com/\rx'],
  ['U+00A0', 'https://example.com/\u00a0x'],
  ['U+2028', 'https://example.com/\u2028x'],
  ['U+3000', 'https://example.com/\u3000x'],
  ['control U+0001', 'https://example.com/\u0001x'],
  ['DEL U+007F', 'https://example.com/\u007fx'],
  ['C1 control U+0085', 'https://example.com/\u0085x'],
  ['U+0000', 'https://example.com/\u0000x'],
  ['user and password', 'https://user:pass@host.example/'],
  ['user only', 'https://user@host.example/'],
  ['empty user-info', 'https://@host.example/'],
]

// ---------------------------------------------------------------------------------------------

const url = suite('urlProblem')

// contract §4: url is an absolute http or https URL with a host
url('accepts absolute http(s) URLs: any letter case, IPs, ports, IDN, query and fragment', () => {
  for (const u of ACCEPTED) assert.is(urlProblem(u), undefined, u)
})

// contract §4: http/https only, with a host, no white space or control characters, no user-info
url('refuses other schemes, relative forms, white space, controls and user-info', () => {
  for (const [why, u] of REJECTED) assert.type(urlProblem(u), 'string', why)
})

// Link URLs with invisible or bidirectional control characters are refused: a browser
// drops "https://exa\u200bmple.com"'s zero-width space and goes to example.com
url('refuses invisible and bidirectional control characters anywhere in the URL', () => {
  const hidden = ['\u00ad', '\u200b', '\u200c', '\u200d', '\u200e', '\u200f', '\u202a', '\u202e', '\u2060', '\u2064', '\u2066', '\u2069', '\ufeff', '\u061c']
  for (const c of hidden) {
    for (const u of [`https://exa${c}mple.com`, `https://example.com/a${c}b`, `https://example.com/?q=${c}`, `https://example.com/#\u{1F469}${c}\u{1F4BB}`]) {
      assert.is(urlProblem(u), 'must not contain invisible or bidirectional control characters', JSON.stringify(u))
    }
  }
  assert.is(urlProblem('https://example.com/%E2%80%8B'), undefined, 'percent-encoded, it is visible as such')
})

url.run()

// ---------------------------------------------------------------------------------------------

const create = suite('parseLinkCreate')

// contract §4: POST /api/v1/links takes {"url"} and optionally {"code"}
create('returns the url exactly as sent, and the code when one is given', () => {
  assert.equal(parseLinkCreate({ url: 'HTTPS://EXAMPLE.COM/x', expiresAt: null }), { url: 'HTTPS://EXAMPLE.COM/x', expiresAt: null, startsAt: null, maxVisits: null, password: null, tags: [], title: null, description: null, imageUrl: null, rules: [], variants: [], conversions: false, promoteWinner: false })
  assert.equal(parseLinkCreate({ url: 'https://e.com/', code: 'aZ3kP9qR', expiresAt: null }), { url: 'https://e.com/', code: 'aZ3kP9qR', expiresAt: null, startsAt: null, maxVisits: null, password: null, tags: [], title: null, description: null, imageUrl: null, rules: [], variants: [], conversions: false, promoteWinner: false })
})

// contract §1: unknown request fields are ignored
create('ignores unknown fields', () => {
  assert.equal(parseLinkCreate({ url: 'https://e.com/', visits: 9, owner: 'x' }), { url: 'https://e.com/', expiresAt: null, startsAt: null, maxVisits: null, password: null, tags: [], title: null, description: null, imageUrl: null, rules: [], variants: [], conversions: false, promoteWinner: false })
})

// contract §2: a field missing or of the wrong type → REQUIRED / TYPE; null counts as missing
create('a missing, null or non-string url is REQUIRED or TYPE', () => {
  assert.equal(fieldCodes(() => parseLinkCreate({})), [['url', 'REQUIRED']])
  assert.equal(fieldCodes(() => parseLinkCreate({ url: null })), [['url', 'REQUIRED']])
  assert.equal(fieldCodes(() => parseLinkCreate({ url: 42 })), [['url', 'TYPE']])
  assert.equal(fieldCodes(() => parseLinkCreate({ url: ['https://e.com/'] })), [['url', 'TYPE']])
})

// spec §8 / contract §4: url of 1 to 4096 UTF-8 bytes
create('an empty url is TOO_SHORT', () => {
  assert.equal(fieldCodes(() => parseLinkCreate({ url: '' })), [['url', 'TOO_SHORT']])
})

// spec §8: URL size 4096 UTF-8 bytes
create('a url of exactly 4096 bytes is accepted and 4097 bytes is TOO_LONG', () => {
  const max = urlOfBytes(4096)
  assert.is(Buffer.byteLength(max), 4096)
  assert.equal(parseLinkCreate({ url: max }), { url: max, expiresAt: null, startsAt: null, maxVisits: null, password: null, tags: [], title: null, description: null, imageUrl: null, rules: [], variants: [], conversions: false, promoteWinner: false })
  const over = urlOfBytes(4097)
  assert.is(Buffer.byteLength(over), 4097)
  assert.equal(fieldCodes(() => parseLinkCreate({ url: over })), [['url', 'TOO_LONG']])
})

// spec §8: the url limit counts UTF-8 bytes, not characters
create('multibyte characters count as their UTF-8 bytes', () => {
  const max = urlOfBytes(4096, 'é')
  assert.is(Buffer.byteLength(max), 4096)
  assert.ok(max.length < 4096)
  assert.equal(parseLinkCreate({ url: max }), { url: max, expiresAt: null, startsAt: null, maxVisits: null, password: null, tags: [], title: null, description: null, imageUrl: null, rules: [], variants: [], conversions: false, promoteWinner: false })
  const over = urlOfBytes(4097, 'é')
  assert.is(Buffer.byteLength(over), 4097)
  assert.ok(over.length < 2100, 'far fewer than 4096 characters')
  assert.equal(fieldCodes(() => parseLinkCreate({ url: over })), [['url', 'TOO_LONG']])
  // 4-byte emoji: 1020 of them after the 20-byte head make 4100 bytes in 2060 UTF-16 units
  const emoji = 'https://example.com/' + '😀'.repeat(1020)
  assert.is(Buffer.byteLength(emoji), 4100)
  assert.equal(fieldCodes(() => parseLinkCreate({ url: emoji })), [['url', 'TOO_LONG']])
})

// contract §4: url rules; every refused url is a url INVALID field error
create('every refused url form is a url INVALID error', () => {
  for (const [why, u] of REJECTED) {
    assert.equal(fieldCodes(() => parseLinkCreate({ url: u })), [['url', 'INVALID']], why)
  }
})

// contract §1: a lone surrogate has no UTF-8 form and makes any string field invalid
create('a lone surrogate in the url is INVALID', () => {
  for (const u of ['https://example.com/\ud800', 'https://example.com/\udc00x', 'https://example.com/\ud83d?q']) {
    assert.equal(fieldCodes(() => parseLinkCreate({ url: u })), [['url', 'INVALID']], JSON.stringify(u))
  }
})

// spec §2: short code is exactly 8 Base62 characters; contract §4: a requested code must be so (422 otherwise)
create('a requested code must be exactly 8 Base62 characters', () => {
  for (const code of ['00000000', 'zzzzzzzz', 'ZZZZZZZZ', 'aZ3kP9qR']) {
    assert.equal(parseLinkCreate({ url: 'https://e.com/', code }), { url: 'https://e.com/', code, expiresAt: null, startsAt: null, maxVisits: null, password: null, tags: [], title: null, description: null, imageUrl: null, rules: [], variants: [], conversions: false, promoteWinner: false }, code)
  }
  const cases: Array<[string, unknown]> = [
    ['7 chars', 'abcdefg'],
    ['9 chars', 'abcdefghi'],
    ['empty', ''],
    ['dash', 'abc-defg'],
    ['underscore', 'abc_defg'],
    ['space', 'abc defg'],
    ['non-ASCII letter', 'abcdefgé'],
    ['emoji', 'abcdefg😀'],
    ['fullwidth digit', 'abcdefg１'],
    ['percent-encoded', '%41bcdefg'],
    ['U+0000', 'abcdefg\u0000'],
    ['lone surrogate', 'abcdefg\ud800'],
    ['number', 12345678],
    ['boolean', true],
  ]
  for (const [why, code] of cases) {
    const errors = fieldErrors(() => parseLinkCreate({ url: 'https://e.com/', code }))
    assert.is(errors[0]?.field, 'code', why)
    assert.is(errors.length, 1, why)
  }
})

// contract §2: errors lists each field
create('lists a url error and a code error together', () => {
  const errors = fieldErrors(() => parseLinkCreate({ url: 'ftp://e.com/', code: 'bad' }))
  assert.equal(errors.map((e) => e.field).sort(), ['code', 'url'])
})

create.run()

// ---------------------------------------------------------------------------------------------

const change = suite('parseLinkChange')

// contract §4: PATCH /api/v1/links/{code} with {"url"}
change('takes the url only and ignores other fields', () => {
  assert.equal(parseLinkChange({ url: 'https://e.com/new', code: 'aZ3kP9qR' }), { url: 'https://e.com/new' })
})

change('refuses a missing url (REQUIRED) and an invalid one (INVALID)', () => {
  assert.equal(fieldCodes(() => parseLinkChange({})), [['url', 'REQUIRED']])
  assert.equal(fieldCodes(() => parseLinkChange({ url: 'javascript:alert(1)' })), [['url', 'INVALID']])
  assert.equal(fieldCodes(() => parseLinkChange({ url: urlOfBytes(4097) })), [['url', 'TOO_LONG']])
})

change.run()

// ---------------------------------------------------------------------------------------------

const location = suite('toLocation')

// contract §5: Location = the stored url, non-ASCII characters percent-encoded as UTF-8, every ASCII character unchanged
location('leaves every ASCII character unchanged', () => {
  let ascii = 'https://example.com/'
  for (let c = 0x21; c <= 0x7e; c++) ascii += String.fromCharCode(c)
  assert.is(toLocation(ascii), ascii)
  assert.is(toLocation('HTTPS://EXAMPLE.COM/a%20b?x=%zz#f'), 'HTTPS://EXAMPLE.COM/a%20b?x=%zz#f')
})

location('percent-encodes non-ASCII characters as UTF-8 bytes', () => {
  assert.is(toLocation('https://exämple.com/ü'), 'https://ex%C3%A4mple.com/%C3%BC')
  assert.is(toLocation('https://e.com/😀?q=€'), 'https://e.com/%F0%9F%98%80?q=%E2%82%AC')
  assert.is(toLocation('https://例え.テスト/'), 'https://%E4%BE%8B%E3%81%88.%E3%83%86%E3%82%B9%E3%83%88/')
})

location.run()

// ---------------------------------------------------------------------------------------------

const code = suite('short codes')

// spec §2: exactly 8 Base62 characters
code('isShortCode accepts exactly 8 Base62 characters', () => {
  assert.ok(isShortCode('aZ3kP9qR'))
  assert.ok(isShortCode('00000000'))
  for (const s of ['', 'aZ3kP9q', 'aZ3kP9qRx', 'aZ3k-9qR', 'aZ3kP9qé', 'aZ3kP9q\n', ' aZ3kP9q']) assert.not.ok(isShortCode(s), s)
})

// contract §4: generated codes are 8 characters drawn from [0-9A-Za-z]
code('10,000 generated codes are 8 Base62 characters and use all 62 of them', () => {
  const seen = new Set<string>()
  const codes = new Set<string>()
  for (let i = 0; i < 10_000; i++) {
    const c = generateCode()
    assert.ok(/^[0-9A-Za-z]{8}$/.test(c), c)
    codes.add(c)
    for (const ch of c) seen.add(ch)
  }
  assert.is(seen.size, 62)
  // 62^8 codes: a repeat among 10,000 would mean a broken generator
  assert.is(codes.size, 10_000)
})

// contract §4: drawn uniformly (no modulo bias)
code('characters are drawn about uniformly', () => {
  const counts = new Map<string, number>()
  const n = 20_000
  for (let i = 0; i < n; i++) for (const ch of generateCode()) counts.set(ch, (counts.get(ch) ?? 0) + 1)
  const expected = (n * 8) / 62 // ≈ 2581 per character
  for (const [ch, count] of counts) {
    // ±20 % is more than 10 standard deviations: only a real bias fails this
    assert.ok(Math.abs(count - expected) < expected * 0.2, `${ch}: ${count} vs ${expected.toFixed(0)}`)
  }
})

code.run()
