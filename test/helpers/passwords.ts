// Password hashes as an earlier release stored them, for tests that start from old data.
import { randomBytes, scryptSync } from 'node:crypto'

/** "scrypt$<log2 N>$8$1$<salt>$<key>" (base64url), exactly as the previous release wrote it. */
export function legacyScryptHash(password: string, log2N = 10): string {
  const salt = randomBytes(16)
  const key = scryptSync(password.normalize('NFC'), salt, 32, { N: 2 ** log2N, r: 8, p: 1, maxmem: 256 * 2 ** log2N * 8 })
  return ['scrypt', log2N, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$')
}
