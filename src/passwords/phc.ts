// Stored password hashes: argon2id as a PHC string (what this release writes), and the scrypt
// format of earlier releases (still verified, replaced at the owner's next login). Pure: no KDF
// runs here.

/** The configured argon2id cost. p is always 1: @noble/hashes computes lanes one after another. */
export interface Argon2Params {
  memoryKiB: number
  iterations: number
}

/** What an operator may configure, and what a stored hash may ask of us (a damaged row must not
 *  make us allocate gigabytes). RFC 9106 needs m ≥ 8·p. */
export const ARGON2_BOUNDS = {
  memoryKiB: { min: 8, max: 1_048_576 },
  iterations: { min: 1, max: 64 },
} as const

export const SALT_BYTES = 16
export const KEY_BYTES = 32

export type StoredHash =
  | { kind: 'argon2id'; memoryKiB: number; iterations: number; salt: Buffer; key: Buffer }
  | { kind: 'scrypt'; log2N: number; salt: Buffer; key: Buffer }

const B64 = '[A-Za-z0-9+/]+'
const ARGON2ID = new RegExp(`^\\$argon2id\\$v=19\\$m=(\\d{1,7}),t=(\\d{1,2}),p=1\\$(${B64})\\$(${B64})$`)
// Earlier releases: scrypt$<log2 N>$8$1$<salt>$<key>, base64url, log2 N from 10 to 20 (its config range).
const SCRYPT = /^scrypt\$(\d{2})\$8\$1\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/

/** "$argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>", base64 without padding (the PHC string format). */
export function encodeArgon2id(params: Argon2Params, salt: Uint8Array, key: Uint8Array): string {
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64').replace(/=+$/, '')
  return `$argon2id$v=19$m=${params.memoryKiB},t=${params.iterations},p=1$${b64(salt)}$${b64(key)}`
}

/** The stored hash, or undefined when it is none we can verify (damaged, or a foreign format). */
export function parseStored(stored: string): StoredHash | undefined {
  const a = ARGON2ID.exec(stored)
  if (a !== null) {
    const [memoryKiB, iterations] = [Number(a[1]), Number(a[2])]
    const salt = Buffer.from(a[3]!, 'base64')
    const key = Buffer.from(a[4]!, 'base64')
    if (!within(memoryKiB, ARGON2_BOUNDS.memoryKiB) || !within(iterations, ARGON2_BOUNDS.iterations)) return undefined
    if (!saltAndKeyFit(salt, key)) return undefined
    return { kind: 'argon2id', memoryKiB, iterations, salt, key }
  }
  const s = SCRYPT.exec(stored)
  if (s !== null) {
    const log2N = Number(s[1])
    const salt = Buffer.from(s[2]!, 'base64url')
    const key = Buffer.from(s[3]!, 'base64url')
    if (log2N < 10 || log2N > 20 || !saltAndKeyFit(salt, key)) return undefined
    return { kind: 'scrypt', log2N, salt, key }
  }
  return undefined
}

/** True when the stored hash is argon2id at exactly the configured cost. */
export function isCurrent(hash: StoredHash, params: Argon2Params): boolean {
  return hash.kind === 'argon2id' && hash.memoryKiB === params.memoryKiB && hash.iterations === params.iterations
}

/**
 * True when checking a password against the hash costs no more than the configured cost: what an
 * imported row may ask (the service writes nothing dearer; ARGON2_BOUNDS alone would let one row
 * pin a KDF thread at 1 GiB for minutes). Hashes of earlier releases: up to their default scrypt
 * N = 2^16 (64 MiB).
 */
export function withinCost(hash: StoredHash, params: Argon2Params): boolean {
  return hash.kind === 'argon2id'
    ? hash.memoryKiB <= params.memoryKiB && hash.iterations <= params.iterations
    : hash.log2N <= SCRYPT_DEFAULT_LOG2N
}

const SCRYPT_DEFAULT_LOG2N = 16

const within = (n: number, range: { min: number; max: number }) => n >= range.min && n <= range.max
// RFC 9106: salt at least 8 bytes, tag at least 4; we never wrote a key under 32 bytes.
const saltAndKeyFit = (salt: Buffer, key: Buffer) => salt.length >= 8 && salt.length <= 64 && key.length >= 16 && key.length <= 64
