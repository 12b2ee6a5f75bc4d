// Short codes: exactly 8 Base62 characters (spec §2), generated without modulo bias.
import { randomFillSync } from 'node:crypto'

export const CODE_LENGTH = 8
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const SHAPE = /^[0-9A-Za-z]{8}$/
// Bytes >= 248 are rejected: 248 = 4 * 62, so the accepted bytes map evenly onto the alphabet.
const UNBIASED_LIMIT = 248

export const isShortCode = (s: string): boolean => s.length === CODE_LENGTH && SHAPE.test(s)

export function generateCode(): string {
  const bytes = Buffer.allocUnsafe(16)
  let code = ''
  while (code.length < CODE_LENGTH) {
    randomFillSync(bytes)
    for (const b of bytes) {
      if (b < UNBIASED_LIMIT) code += ALPHABET[b % 62]
      if (code.length === CODE_LENGTH) break
    }
  }
  return code
}
