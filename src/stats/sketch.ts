// A HyperLogLog sketch of a link's distinct visitors on one day: a fixed 2^P bytes, whatever the
// traffic, from which the count is estimated with a standard error of 1.04 / sqrt(2^P). No
// visitor's hash is kept. Merging is a byte-wise maximum, so adding a visitor twice, or merging
// a sketch into itself, changes nothing (docs/decisions.md, "Unique visitors").
import { hash } from 'node:crypto'

/** Index bits: 2^10 one-byte registers, 1 KiB per link and day. */
export const PRECISION = 10
export const SKETCH_BYTES = 1 << PRECISION
/** The largest register: the rank of a first 1 among the 64 - PRECISION bits after the index. */
export const MAX_RANK = 65 - PRECISION
/** The estimate's relative standard error: 3.25 %. */
export const STANDARD_ERROR = 1.04 / Math.sqrt(SKETCH_BYTES)
const ALPHA = 0.7213 / (1 + 1.079 / SKETCH_BYTES)

export const emptySketch = (): Uint8Array => new Uint8Array(SKETCH_BYTES)

/** Adds one element, given by a uniformly distributed hash of at least 8 bytes. */
export function addHash(sketch: Uint8Array, hash: Uint8Array): void {
  applyRegister(sketch, registerOf(hash))
}

/**
 * What one element does to a sketch, as one number: its register's index and the rank it raises
 * that register to (index << 6 | rank: 16 bits, MAX_RANK < 64). A batch carries its visitors as
 * these rather than as a 1 KiB sketch each: a few visitors of a link and day are a few of them.
 */
export function registerOf(hash: Uint8Array): number {
  const hi = ((hash[0]! << 24) | (hash[1]! << 16) | (hash[2]! << 8) | hash[3]!) >>> 0
  const lo = ((hash[4]! << 24) | (hash[5]! << 16) | (hash[6]! << 8) | hash[7]!) >>> 0
  const index = hi >>> (32 - PRECISION)
  // The position of the first 1 in the 64 - PRECISION bits after the index.
  const rest = (hi << PRECISION) >>> 0
  const rank = rest !== 0 ? Math.clz32(rest) + 1 : 32 - PRECISION + Math.clz32(lo) + 1
  return (index << 6) | rank
}

/** Raises one register (registerOf); true when it changed. */
function applyRegister(sketch: Uint8Array, register: number): boolean {
  const index = register >>> 6
  const rank = register & 63
  if (rank <= sketch[index]!) return false
  sketch[index] = rank
  return true
}

/** Applies registers (registerOf) to a sketch; true when it changed. Applying one twice changes nothing. */
export function applyRegisters(sketch: Uint8Array, registers: ArrayLike<number>): boolean {
  let changed = false
  for (let i = 0; i < registers.length; i++) if (applyRegister(sketch, registers[i]!)) changed = true
  return changed
}

/**
 * Two arrays of registers as one, new (neither is changed: batches share them). Past SKETCH_BYTES
 * entries only each register's highest rank is kept, so a link-day's registers never outgrow a
 * sketch, however many flushes a long database outage puts back into one another.
 */
export function unionRegisters(a: Uint16Array, b: Uint16Array): Uint16Array {
  if (a.length === 0) return b
  if (b.length === 0) return a
  if (a.length + b.length <= SKETCH_BYTES) {
    const out = new Uint16Array(a.length + b.length)
    out.set(a)
    out.set(b, a.length)
    return out
  }
  const sketch = emptySketch()
  applyRegisters(sketch, a)
  applyRegisters(sketch, b)
  const out: number[] = []
  for (let i = 0; i < SKETCH_BYTES; i++) if (sketch[i]! > 0) out.push((i << 6) | sketch[i]!)
  return Uint16Array.from(out)
}

/**
 * A day's visitor of a link, as a register of its sketch: SHA-256 of the day's secret salt, the
 * code and the visitor (the salt first and of fixed length, so no input can pass for another), so
 * a link's registers say nothing of another's, and nothing of a visitor once the salt is gone.
 */
export const visitorRegister = (salt: string, code: string, visitor: string): number => registerOf(hash('sha256', `${salt}\n${code}\n${visitor}`, 'buffer') as unknown as Buffer)

/** Merges `from` into `into`; true when `into` changed. */
export function mergeSketch(into: Uint8Array, from: Uint8Array): boolean {
  let changed = false
  for (let i = 0; i < SKETCH_BYTES; i++) {
    if (from[i]! > into[i]!) {
      into[i] = from[i]!
      changed = true
    }
  }
  return changed
}

/** The estimated count of distinct elements (linear counting while many registers are empty). */
export function estimate(sketch: Uint8Array): number {
  let sum = 0
  let zeros = 0
  for (let i = 0; i < SKETCH_BYTES; i++) {
    sum += 2 ** -sketch[i]!
    if (sketch[i] === 0) zeros++
  }
  const raw = (ALPHA * SKETCH_BYTES * SKETCH_BYTES) / sum
  if (raw <= 2.5 * SKETCH_BYTES && zeros > 0) return SKETCH_BYTES * Math.log(SKETCH_BYTES / zeros)
  return raw
}
