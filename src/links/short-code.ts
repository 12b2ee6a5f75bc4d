// Short codes: exactly 8 Base62 characters (spec §2), generated without modulo bias; the URL a
// browser follows for one, and a route's code parameter. The API and the redirect path share it.
import { randomFillSync } from 'node:crypto'
import { linkNotFound } from '../http/errors.js'

export const CODE_LENGTH = 8
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const SHAPE = /^[0-9A-Za-z]{8}$/
// Bytes >= 248 are rejected: 248 = 4 * 62, so the accepted bytes map evenly onto the alphabet.
const UNBIASED_LIMIT = 248

export const isShortCode = (s: string): boolean => s.length === CODE_LENGTH && SHAPE.test(s)

/** The path prefix of every redirect. */
export const REDIRECT_PREFIX = '/r/'

/** The URL a browser follows for `code`. */
export const shortUrl = (baseUrl: string, code: string): string => `${baseUrl}${REDIRECT_PREFIX}${code}`

/** A malformed code is simply not found, and never reaches the database. */
export function codeParam(ctx: { readonly param: string }): string {
  if (!isShortCode(ctx.param)) throw linkNotFound()
  return ctx.param
}

// One CSPRNG call per few hundred codes: a call per code was 8% of a create's CPU (npm run
// profile). Each byte is used once, so codes stay as unpredictable as the generator.
const POOL_BYTES = 4096
const pool = Buffer.allocUnsafe(POOL_BYTES)
let offset = POOL_BYTES

export function generateCode(): string {
  let code = ''
  while (code.length < CODE_LENGTH) {
    if (offset === POOL_BYTES) {
      randomFillSync(pool)
      offset = 0
    }
    const b = pool[offset++]!
    if (b < UNBIASED_LIMIT) code += ALPHABET[b % 62]
  }
  return code
}
