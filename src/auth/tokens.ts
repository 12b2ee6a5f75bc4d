// Session tokens: 32 CSPRNG bytes as 43 base64url characters, stored only as SHA-256 (spec §2).
import { createHash, randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { unauthorized } from '../http/errors.js'

export const TOKEN_BYTES = 32
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/
// Scheme in any letter case, one or more spaces, one non-empty token, nothing else (contract §3).
const BEARER = /^bearer +([^ ]+)$/i

export const generateToken = (): string => randomBytes(TOKEN_BYTES).toString('base64url')

export const hashToken = (token: string): Buffer => createHash('sha256').update(token).digest()

/**
 * The bearer token of a request, or 401 UNAUTHORIZED. A token that cannot be one of ours
 * (not 43 base64url characters) is refused here, before any database look-up.
 */
export function bearerToken(req: IncomingMessage): string {
  const header = req.headers.authorization
  if (header === undefined) throw unauthorized()
  // Node keeps only the first of repeated Authorization headers; count them in the raw list.
  let seen = 0
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === 'authorization') seen++
  }
  if (seen !== 1) throw unauthorized()
  const token = BEARER.exec(header)?.[1]
  if (token === undefined || !TOKEN_SHAPE.test(token)) throw unauthorized()
  return token
}
