// Click ids (ls_cid): 16 bytes as 22 base64url characters, stored nowhere until they convert.
// They name the link, the variant and the day, and an HMAC under the service's secret binds the
// three to a random nonce, so /c/{id} verifies an id from the id alone (docs/decisions.md,
// "Experiments"):
//   bytes 0-5    the code, 6 bits per Base62 character
//   bytes 6-7    day number mod 512 (9 bits), variant (4 bits), nonce (3 high bits)
//   bytes 8-11   nonce (32 low bits): 35 random bits make each visit's id its own
//   bytes 12-15  the first 32 bits of HMAC-SHA256(secret, "click id", the whole day number, bytes 0-11):
//                the day is bound whole, so an id 512 days old does not pass for today's
import { createHmac, randomFillSync, timingSafeEqual } from 'node:crypto'

export const CLICK_ID_CHARS = 22
const ID_BYTES = 16
const SIGNED_BYTES = 12
const DAY_MOD = 512
/** The longest CONVERSION_WINDOW_DAYS: an id's day must be told apart from the day 512 days later. */
export const MAX_WINDOW_DAYS = 365
const SHAPE = /^[A-Za-z0-9_-]{22}$/

export interface Click {
  code: string
  variant: number
  /** days since 1970-01-01, UTC */
  dayNumber: number
}

/** A Base62 character's value, 0 to 61; 62 for anything else. */
function digitOf(c: number): number {
  if (c >= 48 && c <= 57) return c - 48
  if (c >= 65 && c <= 90) return c - 55
  if (c >= 97 && c <= 122) return c - 61
  return 62
}
const charOf = (d: number): string => String.fromCharCode(d < 10 ? d + 48 : d < 36 ? d + 55 : d + 61)

const tagOf = (secret: Buffer, dayNumber: number, signed: Buffer): Buffer =>
  createHmac('sha256', secret).update(`click id\n${dayNumber}\n`).update(signed).digest().subarray(0, ID_BYTES - SIGNED_BYTES)

// One CSPRNG call per few hundred ids (a call per id was a good part of an id's cost, as for
// short codes); each byte is used once, so nonces stay as unpredictable as the generator.
const POOL_BYTES = 4096
const NONCE_BYTES = 5
const pool = Buffer.allocUnsafe(POOL_BYTES)
let offset = POOL_BYTES

/** Four Base62 characters of `code` from `at`, 6 bits each: 24 bits. */
const quarter = (code: string, at: number): number =>
  (digitOf(code.charCodeAt(at)) << 18) | (digitOf(code.charCodeAt(at + 1)) << 12) | (digitOf(code.charCodeAt(at + 2)) << 6) | digitOf(code.charCodeAt(at + 3))

/** A fresh id for a visit of `code` sent to `variant` on `dayNumber`. */
export function newClickId(secret: Buffer, code: string, variant: number, dayNumber: number): string {
  const id = Buffer.allocUnsafe(ID_BYTES)
  if (offset + NONCE_BYTES > POOL_BYTES) {
    randomFillSync(pool)
    offset = 0
  }
  pool.copy(id, 7, offset + 1, offset + NONCE_BYTES) // the nonce's 32 low bits
  const high = pool[offset]! & 7 // and its 3 high bits
  offset += NONCE_BYTES
  id.writeUIntBE(quarter(code, 0), 0, 3)
  id.writeUIntBE(quarter(code, 4), 3, 3)
  id.writeUInt16BE(((dayNumber % DAY_MOD) << 7) | (variant << 3) | high, 6)
  tagOf(secret, dayNumber, id.subarray(0, SIGNED_BYTES)).copy(id, SIGNED_BYTES)
  return id.toString('base64url')
}

/**
 * What an id names, or undefined: not an id, past its window (its day is taken as the latest
 * one, not after `todayNumber`, that fits its 9 bits), or forged: its HMAC does not match.
 */
export function readClickId(secret: Buffer, id: string, todayNumber: number, windowDays: number): Click | undefined {
  if (!SHAPE.test(id)) return undefined
  const bytes = Buffer.from(id, 'base64url')
  // The last character carries 4 bits past the 16 bytes: only the spelling we write is an id, so
  // that one click cannot count again under 15 other spellings (conversions_seen keys the string).
  if (bytes.length !== ID_BYTES || bytes.toString('base64url') !== id) return undefined
  const packed = bytes.readUInt16BE(6)
  const variant = (packed >> 3) & 15
  const dayNumber = todayNumber - ((((todayNumber - (packed >> 7)) % DAY_MOD) + DAY_MOD) % DAY_MOD)
  if (todayNumber - dayNumber > windowDays) return undefined
  if (!timingSafeEqual(tagOf(secret, dayNumber, bytes.subarray(0, SIGNED_BYTES)), bytes.subarray(SIGNED_BYTES))) return undefined
  let code = ''
  for (const at of [0, 3]) {
    const bits = bytes.readUIntBE(at, 3)
    for (let shift = 18; shift >= 0; shift -= 6) code += charOf((bits >> shift) & 63)
  }
  return { code, variant, dayNumber }
}

/** The Location with ls_cid added to its query (before any fragment). */
export function withClickId(location: string, id: string): string {
  const hash = location.indexOf('#')
  const [base, fragment] = hash === -1 ? [location, ''] : [location.slice(0, hash), location.slice(hash)]
  const q = base.indexOf('?')
  const sep = q === -1 ? '?' : q === base.length - 1 || base.endsWith('&') ? '' : '&'
  return `${base}${sep}ls_cid=${id}${fragment}`
}
