// Stored password hashes (src/passwords/phc.ts) and the derivations (src/passwords/derive.ts).
// Issue 9: new hashes are argon2id (RFC 9106) stored as PHC strings; the scrypt hashes of the
// previous release still verify.
import { randomBytes, scryptSync } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { derive } from '../../src/passwords/derive.js'
import { encodeArgon2id, isCurrent, parseStored } from '../../src/passwords/phc.js'

const test = suite('PHC strings and derivations')

// Argon2id stored as "$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>", base64 without padding
test('encodeArgon2id writes the PHC string format, and parseStored reads it back', () => {
  const salt = Buffer.from('somesalt-16bytes')
  const key = randomBytes(32)
  const phc = encodeArgon2id({ memoryKiB: 19_456, iterations: 2 }, salt, key)
  assert.match(phc, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
  const parsed = parseStored(phc)
  assert.ok(parsed?.kind === 'argon2id')
  assert.is(parsed.memoryKiB, 19_456)
  assert.is(parsed.iterations, 2)
  assert.ok(parsed.salt.equals(salt))
  assert.ok(parsed.key.equals(key))
})

// RFC 9106 / the reference implementation's test vector (argon2 src/test.c): interoperable hashes
test('the argon2 reference test vector verifies: m=65536, t=2, p=1, "password", "somesalt"', () => {
  const reference = '$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc'
  const parsed = parseStored(reference)
  assert.ok(parsed?.kind === 'argon2id')
  const key = derive({ alg: 'argon2id', password: 'password', salt: parsed.salt, memoryKiB: 65_536, iterations: 2, dkLen: parsed.key.length })
  assert.is(Buffer.from(key).toString('hex'), '09316115d5cf24ed5a15a31a3ba326e5cf32edc24702987c02b6566f61913cf7')
})

// Hashes written by the previous release (scrypt$<log2 N>$8$1$<salt>$<key>) still verify
test('the scrypt format of the previous release parses and derives the same key', () => {
  const salt = randomBytes(16)
  const key = scryptSync('correct horse', salt, 32, { N: 2 ** 10, r: 8, p: 1 })
  const stored = ['scrypt', 10, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$')
  const parsed = parseStored(stored)
  assert.ok(parsed?.kind === 'scrypt')
  assert.is(parsed.log2N, 10)
  assert.ok(Buffer.from(derive({ alg: 'scrypt', password: 'correct horse', salt: parsed.salt, log2N: 10, dkLen: 32 })).equals(key))
})

// A damaged row verifies nothing; nor may it make us allocate gigabytes
test('damaged, foreign or outlandish hashes do not parse', () => {
  const salt = Buffer.alloc(16, 1).toString('base64').replace(/=+$/, '')
  const key = Buffer.alloc(32, 2).toString('base64').replace(/=+$/, '')
  const b64url = (n: number) => Buffer.alloc(n, 3).toString('base64url')
  for (const stored of [
    '',
    'not a hash',
    '$argon2i$v=19$m=19456,t=2,p=1$' + salt + '$' + key, // argon2i
    '$argon2id$v=16$m=19456,t=2,p=1$' + salt + '$' + key, // version 1.0
    '$argon2id$v=19$m=19456,t=2,p=4$' + salt + '$' + key, // parallel lanes: never written
    '$argon2id$v=19$m=4,t=2,p=1$' + salt + '$' + key, // under RFC 9106's 8 KiB
    '$argon2id$v=19$m=4194304,t=2,p=1$' + salt + '$' + key, // 4 GiB
    '$argon2id$v=19$m=19456,t=0,p=1$' + salt + '$' + key,
    '$argon2id$v=19$m=19456,t=99,p=1$' + salt + '$' + key,
    '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$' + key, // 4-byte salt
    '$argon2id$v=19$m=19456,t=2,p=1$' + salt + '$a2V5', // 3-byte key
    '$argon2id$v=19$m=19456,t=2,p=1$' + salt, // key missing
    '$argon2id$v=19$m=19456,t=2,p=1$' + salt + '$' + key + '$', // trailing
    'scrypt$1$1$1$x$y',
    `scrypt$22$8$1$${b64url(16)}$${b64url(32)}`, // beyond what the previous release allowed
    `scrypt$16$32$1$${b64url(16)}$${b64url(32)}`, // r other than 8
    `scrypt$16$8$1$${b64url(16)}`,
    `bcrypt$10$8$1$${b64url(16)}$${b64url(32)}`,
  ]) {
    assert.is(parseStored(stored), undefined, stored)
  }
})

// Weaker (or otherwise different) parameters are rehashed at the next login
test('isCurrent: argon2id at exactly the configured cost', () => {
  const params = { memoryKiB: 19_456, iterations: 2 }
  const salt = randomBytes(16)
  const key = randomBytes(32)
  assert.ok(isCurrent(parseStored(encodeArgon2id(params, salt, key))!, params))
  assert.not.ok(isCurrent(parseStored(encodeArgon2id({ memoryKiB: 4096, iterations: 2 }, salt, key))!, params))
  assert.not.ok(isCurrent(parseStored(encodeArgon2id({ memoryKiB: 19_456, iterations: 1 }, salt, key))!, params))
  const scrypt = ['scrypt', 16, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$')
  assert.not.ok(isCurrent(parseStored(scrypt)!, params))
})

test.run()
