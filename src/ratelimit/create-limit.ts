// Link creation per account, across the cluster: LINK_CREATE_PER_MINUTE at once, refilled over a
// minute (a token bucket, kept as the leaky bucket it equals: level = tokens used), a tenth of it
// for an account younger than NEW_ACCOUNT_HOURS. Past it, 429 with Retry-After.
import { rateLimited } from '../http/errors.js'
import type { LeakyBuckets } from './leaky.js'

/** A new account's share: a tenth, at least one a minute. */
export const youngLimit = (perMinute: number): number => Math.max(1, Math.floor(perMinute / 10))

/** Takes one create from the account's allowance, or throws 429. */
export async function takeCreateAllowance(buckets: LeakyBuckets, userId: string, perMinute: number): Promise<void> {
  const drainPerSecond = perMinute / 60
  const { added, level } = await buckets.add(`creates account ${userId}`, perMinute, drainPerSecond)
  if (!added) throw rateLimited(Math.max(1, Math.ceil((level + 1 - perMinute) / drainPerSecond)))
}
