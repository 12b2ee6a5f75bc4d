// Session tokens and bearer parsing (src/auth/tokens.ts).
// Spec §2, §5; contract §3.
import { createHash } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { bearerToken, generateToken, hashToken } from '../../src/auth/tokens.js'
import { HttpError } from '../../src/http/errors.js'

const TOKEN = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde'

/** A fake request with these Authorization header values, as Node would present them. */
function req(...values: string[]): IncomingMessage {
  const headers: Record<string, string> = {}
  // Node keeps the first of repeated Authorization headers in req.headers
  if (values[0] !== undefined) headers.authorization = values[0]
  const rawHeaders = ['Host', 'localhost', ...values.flatMap((v) => ['Authorization', v])]
  return { headers, rawHeaders } as unknown as IncomingMessage
}

function assertRefused(r: IncomingMessage, label: string): void {
  try {
    bearerToken(r)
  } catch (err) {
    assert.instance(err, HttpError, label)
    const e = err as HttpError
    assert.is(e.status, 401, label)
    assert.is(e.code, 'UNAUTHORIZED', label)
    assert.match(e.headers['www-authenticate'] ?? '', /^Bearer(\s|$)/, label)
    return
  }
  assert.unreachable(`${label}: accepted`)
}

// ---------------------------------------------------------------------------------------------
const bearer = suite('bearerToken')

// spec §5.3 / contract §3: scheme in any case, one or more spaces, one token
bearer('returns the token for "Bearer <token>" in any scheme case and with several spaces', () => {
  assert.is(TOKEN.length, 43)
  for (const value of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER ${TOKEN}`, `BeArEr ${TOKEN}`, `Bearer    ${TOKEN}`]) {
    assert.is(bearerToken(req(value)), TOKEN, value)
  }
  // header names are case-insensitive in rawHeaders too
  const lower = { headers: { authorization: `Bearer ${TOKEN}` }, rawHeaders: ['authorization', `Bearer ${TOKEN}`] }
  assert.is(bearerToken(lower as unknown as IncomingMessage), TOKEN)
})

// spec §5.4, §7 / contract §3: missing or malformed → 401 UNAUTHORIZED
bearer('refuses a missing or malformed header with 401 UNAUTHORIZED', () => {
  assertRefused(req(), 'missing')
  const malformed: Array<[string, string]> = [
    ['empty', ''],
    ['scheme alone', 'Bearer'],
    ['scheme and spaces', 'Bearer   '],
    ['token alone', TOKEN],
    ['Basic', 'Basic dXNlcjpwYXNz'],
    ['no space', `Bearer${TOKEN}`],
    ['tab', `Bearer\t${TOKEN}`],
    ['leading space', ` Bearer ${TOKEN}`],
    ['trailing space', `Bearer ${TOKEN} `],
    ['two words', 'Bearer a b'],
    ['trailing part', `Bearer ${TOKEN} x`],
    ['42 chars', `Bearer ${TOKEN.slice(0, 42)}`],
    ['44 chars', `Bearer ${TOKEN}A`],
    ['padding', `Bearer ${TOKEN.slice(0, 42)}=`],
    ['plus and slash', `Bearer ${TOKEN.slice(0, 41)}+/`],
    ['non-ASCII', `Bearer ${TOKEN.slice(0, 42)}é`],
    ['short token', 'Bearer abc'],
  ]
  for (const [label, value] of malformed) assertRefused(req(value), label)
})

// contract §3: several Authorization headers are malformed
bearer('refuses two Authorization headers, even identical ones', () => {
  assertRefused(req(`Bearer ${TOKEN}`, `Bearer ${TOKEN}`), 'identical')
  assertRefused(req(`Bearer ${TOKEN}`, 'Basic eDp5'), 'different')
})

// ---------------------------------------------------------------------------------------------
const tokens = suite('generateToken / hashToken')

// spec §2: 32 cryptographically random bytes as 43 unpadded base64url characters
tokens('generateToken gives 43 base64url characters encoding 32 bytes', () => {
  for (let i = 0; i < 50; i++) {
    const t = generateToken()
    assert.match(t, /^[A-Za-z0-9_-]{43}$/)
    assert.is(Buffer.from(t, 'base64url').length, 32)
    assert.is(Buffer.from(t, 'base64url').toString('base64url'), t)
  }
})

tokens('generateToken never repeats (1000 draws) and uses the whole alphabet', () => {
  const seen = new Set<string>()
  for (let i = 0; i < 1000; i++) seen.add(generateToken())
  assert.is(seen.size, 1000)
  const chars = new Set([...seen].join(''))
  // 43,000 characters drawn from 64: every one of them appears
  assert.is(chars.size, 64)
})

// contract §3: tokens are stored only as a SHA-256 digest
tokens('hashToken is the SHA-256 digest of the token text', () => {
  const expected = createHash('sha256').update(TOKEN).digest()
  assert.ok(hashToken(TOKEN).equals(expected))
  assert.is(hashToken(TOKEN).length, 32)
  assert.is(hashToken('abc').toString('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  assert.not.ok(hashToken(TOKEN).equals(hashToken(TOKEN.toLowerCase())))
})

bearer.run()
tokens.run()
