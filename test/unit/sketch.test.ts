// The unique-visitor sketch (src/stats/sketch.ts): its estimate stays within three standard
// errors, adding the same element again changes nothing, and merging is a union.
import { createHash } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { addHash, applyRegisters, emptySketch, estimate, mergeSketch, registerOf, SKETCH_BYTES, STANDARD_ERROR, visitorRegister } from '../../src/stats/sketch.js'

const h = (key: string) => createHash('sha256').update(key).digest()

test('10,000 distinct keys are estimated within three standard errors; small counts nearly exactly', () => {
  for (const [n, seed] of [[10_000, 'a'], [10_000, 'b'], [50_000, 'c']] as const) {
    const sketch = emptySketch()
    for (let i = 0; i < n; i++) addHash(sketch, h(`${seed}${i}`))
    const error = Math.abs(estimate(sketch) - n) / n
    assert.ok(error < 3 * STANDARD_ERROR, `${n} keys (${seed}): off by ${(error * 100).toFixed(2)} %`)
  }
  const few = emptySketch()
  for (let i = 0; i < 20; i++) addHash(few, h(`few${i}`))
  assert.is(Math.round(estimate(few)), 20)
  assert.is(estimate(emptySketch()), 0)
})

test('adding a key again changes nothing; a merge is the union of two sketches', () => {
  const a = emptySketch()
  const b = emptySketch()
  for (let i = 0; i < 3_000; i++) addHash(i < 2_000 ? a : b, h(`k${i}`))
  const before = Uint8Array.from(a)
  for (let i = 0; i < 2_000; i++) addHash(a, h(`k${i}`))
  assert.equal(a, before, 'the same keys again')
  assert.ok(mergeSketch(a, b))
  assert.not.ok(mergeSketch(a, b), 'merging again changes nothing')
  assert.ok(Math.abs(estimate(a) - 3_000) / 3_000 < 3 * STANDARD_ERROR)
  assert.is(a.length, SKETCH_BYTES)
})

test('registers are what a hash does to a sketch: applied, they make the sketch addHash makes; applied again, nothing changes', () => {
  const byHash = emptySketch()
  const registers = new Uint16Array(5_000)
  for (let i = 0; i < registers.length; i++) {
    addHash(byHash, h(`r${i}`))
    registers[i] = registerOf(h(`r${i}`))
  }
  const byRegisters = emptySketch()
  assert.ok(applyRegisters(byRegisters, registers))
  assert.equal(byRegisters, byHash)
  assert.not.ok(applyRegisters(byRegisters, registers), 'applying them again changes nothing')
  assert.ok(registers.every((r) => r >>> 6 < SKETCH_BYTES && (r & 63) >= 1), 'each names a register and a rank of at least 1')
})

test('a visitor\'s register depends on the salt and the code: one link\'s sketch says nothing of another\'s', () => {
  const salt = 'ab'.repeat(32)
  assert.is(visitorRegister(salt, 'AAAAAAAA', '192.0.2.1'), registerOf(createHash('sha256').update(`${salt}\nAAAAAAAA\n192.0.2.1`).digest()))
  const many = (s: string, code: string) => Array.from({ length: 64 }, (_, i) => visitorRegister(s, code, `192.0.2.${i}`))
  assert.not.equal(many(salt, 'AAAAAAAA'), many(salt, 'BBBBBBBB'))
  assert.not.equal(many(salt, 'AAAAAAAA'), many('cd'.repeat(32), 'AAAAAAAA'))
})

test.run()
