// Standard Webhooks signatures (standardwebhooks.com): the key is the base64 after "whsec_", the
// signed content is "{webhook-id}.{webhook-timestamp}.{body}", the signature "v1," + base64 HMAC-SHA256.
import { createHmac, randomBytes } from 'node:crypto'

const PREFIX = 'whsec_'

/** A new endpoint secret: 32 bytes from the crypto RNG. */
export function newSecret(): string {
  return PREFIX + randomBytes(32).toString('base64')
}

/** The webhook-signature header's value for one message. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64')
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')
}
