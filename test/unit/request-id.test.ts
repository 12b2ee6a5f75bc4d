// Unit tests of X-Request-Id selection (src/http/request-id.ts, contract §1).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { newRequestId, requestIdFor } from '../../src/http/request-id.js'

const test = suite('request-id')
const GENERATED = /^[0-9a-f]{32}$/

const VISIBLE_ASCII = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('')

// contract §1: a supplied value is reused when it is 1 to 200 visible ASCII characters (0x21 to 0x7E)
test('reuses a supplied value of 1 to 200 visible ASCII characters', () => {
  assert.is(requestIdFor('a'), 'a')
  assert.is(requestIdFor('x'.repeat(200)), 'x'.repeat(200))
  assert.is(requestIdFor(VISIBLE_ASCII), VISIBLE_ASCII)
  assert.is(requestIdFor('req-123_ABC.~!"#$%&\'()*+,/:;<=>?@[\\]^`{|}'), 'req-123_ABC.~!"#$%&\'()*+,/:;<=>?@[\\]^`{|}')
})

// contract §1: otherwise, or when absent, 32 lowercase hex characters
test('generates an id when the supplied value is absent, empty, too long, or not visible ASCII', () => {
  const bad = [
    undefined,
    '',
    'x'.repeat(201),
    'has space',
    ' ',
    'tab\there',
    'nl\nx',
    'caf\u00e9',
    '\u{1F600}',
    'del\x7f',
    'nul\x00',
    '\x20lead',
  ]
  for (const value of bad) {
    const id = requestIdFor(value)
    assert.ok(GENERATED.test(id), `${JSON.stringify(value)} → ${id}`)
    assert.is.not(id, value)
  }
})

// contract §1: generated from 16 random bytes — so ids differ, also across the pool refill
test('generated ids are 32 lowercase hex characters and all differ (more than one pool of 512)', () => {
  const seen = new Set<string>()
  for (let i = 0; i < 2000; i++) {
    const id = newRequestId()
    assert.ok(GENERATED.test(id), id)
    seen.add(id)
  }
  assert.is(seen.size, 2000)
})

// contract §1: 32 lowercase hex characters from 16 random bytes
test('generated ids are not all-zero (the pool is actually filled)', () => {
  for (let i = 0; i < 600; i++) assert.is.not(newRequestId(), '0'.repeat(32))
})

test.run()
