// A HyperLogLog sketch of a link's distinct visitors on one day: a fixed 2^P bytes, whatever the
// traffic, from which the count is estimated with a standard error of 1.04 / sqrt(2^P). No
// visitor's hash is kept. Merging is a byte-wise maximum, so adding a visitor twice, or merging
// a sketch into itself, changes nothing (docs/decisions.md, "Unique visitors").

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
  const hi = ((hash[0]! << 24) | (hash[1]! << 16) | (hash[2]! << 8) | hash[3]!) >>> 0
  const lo = ((hash[4]! << 24) | (hash[5]! << 16) | (hash[6]! << 8) | hash[7]!) >>> 0
  const index = hi >>> (32 - PRECISION)
  // The position of the first 1 in the 64 - PRECISION bits after the index.
  const rest = (hi << PRECISION) >>> 0
  const rank = rest !== 0 ? Math.clz32(rest) + 1 : 32 - PRECISION + Math.clz32(lo) + 1
  if (rank > sketch[index]!) sketch[index] = rank
}

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
