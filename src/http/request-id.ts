// X-Request-Id (contract §1): reuse a supplied value of 1-200 visible ASCII characters,
// otherwise 32 lowercase hex characters from 16 random bytes.
import { randomFillSync } from 'node:crypto'

const VALID = /^[\x21-\x7e]{1,200}$/
const POOL_BYTES = 16 * 512
// One CSPRNG call per 512 ids keeps the redirect path free of a syscall per request.
const pool = Buffer.allocUnsafe(POOL_BYTES)
let offset = POOL_BYTES

export function newRequestId(): string {
  if (offset === POOL_BYTES) {
    randomFillSync(pool)
    offset = 0
  }
  const id = pool.toString('hex', offset, offset + 16)
  offset += 16
  return id
}

export function requestIdFor(supplied: string | undefined): string {
  return supplied !== undefined && VALID.test(supplied) ? supplied : newRequestId()
}
