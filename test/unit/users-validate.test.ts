// Account field validators (src/users/validate.ts) and code-point length (src/http/fields.ts).
// Spec §2, §8; contract §1-§3.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { HttpError } from '../../src/http/errors.js'
import { codePointLength } from '../../src/http/fields.js'
import { parseCredentials, parseProfileChange, parseRegistration } from '../../src/users/validate.js'
import { fieldErrors } from '../helpers/fields.js'

const EMOJI = '😀'

/** The sorted "field:CODE" list of the 422 a validator throws; fails when it does not throw one. */
function errorsOf(fn: () => unknown): string[] {
  return fieldErrors(fn).map((fe) => `${fe.field}:${fe.code}`).sort()
}

const valid = { username: 'alice', password: 'correct horse', display_name: 'Alice' }
const reg = (over: Record<string, unknown>) => parseRegistration({ ...valid, ...over })

// ---------------------------------------------------------------------------------------------
const cp = suite('codePointLength')

// contract §1: lengths "in Unicode characters" count code points (an emoji is 1, not 2)
cp('counts code points, not UTF-16 units or bytes', () => {
  assert.is(codePointLength(''), 0)
  assert.is(codePointLength('abc'), 3)
  assert.is(codePointLength(EMOJI), 1)
  assert.is(EMOJI.length, 2)
  assert.is(codePointLength(EMOJI.repeat(8)), 8)
  assert.is(codePointLength('Zoë'), 3)
  assert.is(codePointLength('\u3000\u3000'), 2)
  assert.is(codePointLength('a\u0000b'), 3)
  // a combining sequence is several code points
  assert.is(codePointLength('e\u0301'), 2)
  // a lone surrogate is one code point to count (validators reject it separately)
  assert.is(codePointLength('\ud800'), 1)
})

// ---------------------------------------------------------------------------------------------
const registration = suite('parseRegistration')

// contract §3: username stored in lowercase; display_name kept as sent
registration('returns the lowercase username, the password and display name as given', () => {
  assert.equal(parseRegistration({ username: 'MiXeD_Case!', password: 'Pass Word 1', display_name: 'Zoë 😀' }), {
    username: 'mixed_case!',
    password: 'Pass Word 1',
    displayName: 'Zoë 😀',
  })
})

// contract §1: unknown request fields are ignored
registration('ignores unknown fields', () => {
  const out = parseRegistration({ ...valid, admin: true, id: 'x' })
  assert.equal(Object.keys(out).sort(), ['displayName', 'password', 'username'])
})

// contract §3: username 2..32 visible ASCII (0x21..0x7E)
registration('username: 2..32 visible ASCII characters', () => {
  assert.is(reg({ username: 'ab' }).username, 'ab')
  assert.is(reg({ username: 'x'.repeat(32) }).username, 'x'.repeat(32))
  assert.is(reg({ username: '!~' }).username, '!~')
  assert.equal(errorsOf(() => reg({ username: 'a' })), ['username:TOO_SHORT'])
  assert.equal(errorsOf(() => reg({ username: '' })), ['username:TOO_SHORT'])
  assert.equal(errorsOf(() => reg({ username: 'x'.repeat(33) })), ['username:TOO_LONG'])
  for (const bad of ['a b', 'a\tb', 'a\u007fb', 'aé', 'a😀', 'a\u0000b', 'a\u00a0b', 'a\nb']) {
    assert.equal(errorsOf(() => reg({ username: bad })), ['username:INVALID'], JSON.stringify(bad))
  }
  assert.equal(errorsOf(() => reg({ username: 'ab\ud800' })), ['username:INVALID'])
  for (const bad of [1, true, [], {}]) assert.equal(errorsOf(() => reg({ username: bad })), ['username:TYPE'], JSON.stringify(bad))
  assert.equal(errorsOf(() => parseRegistration({ password: 'correct horse', display_name: 'Alice' })), ['username:REQUIRED'])
})

// contract §3: password 8..128 Unicode characters, any characters; contract §1: U+0000 allowed in a password
registration('password: 8..128 code points, U+0000 allowed, lone surrogate INVALID', () => {
  assert.is(reg({ password: EMOJI.repeat(8) }).password, EMOJI.repeat(8))
  assert.is(reg({ password: 'p'.repeat(128) }).password, 'p'.repeat(128))
  assert.is(reg({ password: EMOJI.repeat(128) }).password, EMOJI.repeat(128))
  assert.is(reg({ password: 'abc\u0000defgh' }).password, 'abc\u0000defgh')
  assert.is(reg({ password: '        ' }).password, '        ')
  assert.equal(errorsOf(() => reg({ password: EMOJI.repeat(7) })), ['password:TOO_SHORT'])
  assert.equal(errorsOf(() => reg({ password: 'p'.repeat(7) })), ['password:TOO_SHORT'])
  assert.equal(errorsOf(() => reg({ password: 'p'.repeat(129) })), ['password:TOO_LONG'])
  assert.equal(errorsOf(() => reg({ password: 'correct\ud800horse' })), ['password:INVALID'])
  assert.equal(errorsOf(() => reg({ password: 'correct\udfffhorse' })), ['password:INVALID'])
  assert.equal(errorsOf(() => reg({ password: 12345678 })), ['password:TYPE'])
})

// contract §3: display_name 2..32 characters, no control characters, not only whitespace
registration('display_name: 2..32 code points, no control characters, not only whitespace', () => {
  for (const good of ['ab', 'd'.repeat(32), EMOJI.repeat(2), EMOJI.repeat(32), ' a ', 'Zoë']) {
    assert.is(reg({ display_name: good }).displayName, good)
  }
  assert.equal(errorsOf(() => reg({ display_name: 'a' })), ['display_name:TOO_SHORT'])
  assert.equal(errorsOf(() => reg({ display_name: EMOJI })), ['display_name:TOO_SHORT'])
  assert.equal(errorsOf(() => reg({ display_name: 'd'.repeat(33) })), ['display_name:TOO_LONG'])
  assert.equal(errorsOf(() => reg({ display_name: EMOJI.repeat(33) })), ['display_name:TOO_LONG'])
  for (const bad of ['ab\u0000cd', 'ab\u007fcd', 'ab\u0085cd', 'ab\u009fcd', 'ab\tcd', 'ab\rcd', '\u001bab']) {
    assert.equal(errorsOf(() => reg({ display_name: bad })), ['display_name:INVALID'], JSON.stringify(bad))
  }
  for (const bad of ['  ', '\u3000\u3000', '\u00a0\u00a0', '\u2003 \u2028']) {
    assert.equal(errorsOf(() => reg({ display_name: bad })), ['display_name:INVALID'], JSON.stringify(bad))
  }
  // not only invisible characters either: zero-width space and joiners, BOM, soft hyphen
  for (const bad of ['\u200b\u200b', '\u200d\u200c', '\ufeff\u200b', '\u00ad\u00ad', ' \u2060 ']) {
    assert.equal(errorsOf(() => reg({ display_name: bad })), ['display_name:INVALID'], JSON.stringify(bad))
  }
  // Nor any invisible or bidirectional control character (U+00AD, U+200B–U+200F,
  // U+202A–U+202E, U+2060–U+2064, U+2066–U+2069, U+FEFF), e.g. U+202E reversing what follows
  for (const bad of ['a\u200b', 'x\u00ady', 'Bob\u202Egnp.exe', 'ab\u200ecd', 'ab\u200fcd', 'ab\u202acd', 'ab\u2064cd', 'ab\u2066cd', 'ab\u2069cd', 'ab\ufeffcd', 'ab\u061ccd', 'a\u200db']) {
    assert.equal(errorsOf(() => reg({ display_name: bad })), ['display_name:INVALID'], JSON.stringify(bad))
    assert.equal(errorsOf(() => parseProfileChange({ display_name: bad })), ['display_name:INVALID'], JSON.stringify(bad))
  }
  // ... but a zero-width joiner inside an emoji sequence is part of one visible emoji
  for (const good of ['\u{1F468}\u200d\u{1F469}', 'Ann \u{1F469}\u{1F3FD}\u200d\u{1F4BB}', '\u{1F3F3}\ufe0f\u200d\u{1F308} pride']) {
    assert.is(reg({ display_name: good }).displayName, good, JSON.stringify(good))
  }
  assert.equal(errorsOf(() => reg({ display_name: 'ab\udc00' })), ['display_name:INVALID'])
  assert.equal(errorsOf(() => reg({ display_name: 42 })), ['display_name:TYPE'])
})

// contract §2: `errors` lists each field
registration('collects one error per bad field', () => {
  assert.equal(errorsOf(() => parseRegistration({})), ['display_name:REQUIRED', 'password:REQUIRED', 'username:REQUIRED'])
  assert.equal(errorsOf(() => parseRegistration({ username: 'a b', password: 'short', display_name: 'x'.repeat(40) })), [
    'display_name:TOO_LONG',
    'password:TOO_SHORT',
    'username:INVALID',
  ])
})

// contract §2: messages never echo secrets
registration('error messages never echo the password', () => {
  for (const password of ['sekrit7', 'sekrit7'.repeat(20), 'sekrit7\ud800x']) {
    let thrown: unknown
    try {
      reg({ password })
    } catch (err) {
      thrown = err
    }
    assert.instance(thrown, HttpError, 'an invalid password is refused')
    const e = thrown as HttpError
    assert.not.ok(e.message.includes('sekrit'))
    assert.not.ok(JSON.stringify(e.errors).includes('sekrit'))
  }
})

// ---------------------------------------------------------------------------------------------
const credentials = suite('parseCredentials')

// contract §3: login does not validate password length; the username is compared exactly (no folding)
credentials('accepts any string lengths and keeps the username exactly as sent', () => {
  assert.equal(parseCredentials({ username: 'Alice', password: 'abc' }), { username: 'Alice', password: 'abc' })
  assert.equal(parseCredentials({ username: 'a', password: '' }), { username: 'a', password: '' })
  assert.equal(parseCredentials({ username: 'x'.repeat(100), password: 'p'.repeat(500) }).password, 'p'.repeat(500))
  assert.equal(parseCredentials({ username: 'bob', password: 'a\u0000b' }).password, 'a\u0000b')
})

// contract §2: a missing field or one of the wrong type → 422
credentials('missing or non-string fields are REQUIRED / TYPE', () => {
  assert.equal(errorsOf(() => parseCredentials({})), ['password:REQUIRED', 'username:REQUIRED'])
  assert.equal(errorsOf(() => parseCredentials({ username: 1, password: false })), ['password:TYPE', 'username:TYPE'])
})

// ---------------------------------------------------------------------------------------------
const profile = suite('parseProfileChange')

// contract §3: PATCH with display_name and/or password (then current_password is required)
profile('display_name alone, password with current_password, or both', () => {
  assert.equal(parseProfileChange({ display_name: 'New Name' }), { displayName: 'New Name' })
  assert.equal(parseProfileChange({ password: 'new password', current_password: 'x' }), {
    password: { current: 'x', next: 'new password' },
  })
  assert.equal(parseProfileChange({ display_name: 'Both', password: 'new password', current_password: 'old' }), {
    displayName: 'Both',
    password: { current: 'old', next: 'new password' },
  })
})

profile('password without current_password is REQUIRED; neither field is 422', () => {
  assert.equal(errorsOf(() => parseProfileChange({ password: 'new password' })), ['current_password:REQUIRED'])
  assert.ok(errorsOf(() => parseProfileChange({})).length > 0)
  assert.ok(errorsOf(() => parseProfileChange({ current_password: 'x' })).length > 0)
})

// contract §3: the registration rules apply to the new password and display name
profile('the new password and display_name follow the registration rules', () => {
  assert.equal(errorsOf(() => parseProfileChange({ password: 'short', current_password: 'x' })), ['password:TOO_SHORT'])
  assert.equal(errorsOf(() => parseProfileChange({ password: 'p'.repeat(129), current_password: 'x' })), ['password:TOO_LONG'])
  assert.equal(errorsOf(() => parseProfileChange({ display_name: '\u3000\u3000' })), ['display_name:INVALID'])
  assert.equal(errorsOf(() => parseProfileChange({ display_name: 'a\u0085b' })), ['display_name:INVALID'])
  assert.equal(errorsOf(() => parseProfileChange({ display_name: 'a' })), ['display_name:TOO_SHORT'])
  assert.equal(parseProfileChange({ password: EMOJI.repeat(8), current_password: 'x' }).password?.next, EMOJI.repeat(8))
})

cp.run()
registration.run()
credentials.run()
profile.run()
