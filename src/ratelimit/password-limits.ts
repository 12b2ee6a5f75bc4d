// Limits on password checks beyond the spec's per-address login bucket, kept in leaky
// buckets that every node shares. See docs/decisions.md ("Password checks: fairness and limits").
import { createHash } from 'node:crypto'
import { rateLimited } from '../http/errors.js'
import { takeOrRefuse, type LeakyBuckets } from './leaky.js'

// Failed logins, per account (the username as sent, so an unknown one is treated alike): five are
// free, then each failure's answer is held back longer, 0.5 s doubling up to 15 s. The count
// drains by one a minute and stops at 30, so an attack's trace is gone within half an hour.
// A correct password is never held back: the owner gets in whatever an attacker does.
const FREE_FAILURES = 5
const FAILURE_LEVEL_CAP = 30
const FAILURES_DRAIN_PER_SECOND = 1 / 60
export const MAX_FAILURE_DELAY_MS = 15_000

// Password changes and account deletions: five per account, then one a minute; twenty per
// address, then one every six seconds.
const CHANGES_PER_ACCOUNT = { limit: 5, drainPerSecond: 1 / 60 }
const CHANGES_PER_ADDRESS = { limit: 20, drainPerSecond: 1 / 6 }

/** How long the answer to a failed login is held back, at this many recent failures. */
export function failureDelayMs(level: number): number {
  const beyond = Math.ceil(level - FREE_FAILURES) // the count drains continuously: 5.9 is a sixth
  return beyond <= 0 ? 0 : Math.min(MAX_FAILURE_DELAY_MS, 500 * 2 ** (beyond - 1))
}

/** Counts a failed login for this username; resolves to how long its answer is to be held back. */
export async function noteFailedLogin(buckets: LeakyBuckets, username: string): Promise<number> {
  const key = `login-failures ${createHash('sha256').update(username).digest('base64url')}`
  const { level } = await buckets.add(key, FAILURE_LEVEL_CAP, FAILURES_DRAIN_PER_SECOND)
  return failureDelayMs(level)
}

// Guesses at a link's password (POST /r/{code}/unlock), refused with 429 before any hashing:
// - every try from an address takes one of its ten, refilled at ten a minute, whatever the link;
// - once a link has had ten wrong tries (draining one a minute), an address that has itself tried
//   that link wrong within the last minute (per wrong try) is refused too, so many addresses together get
//   about one guess each a minute. An address with no wrong try at the link (its owner's, a new
//   visitor's) is never refused for the link's sake: a guesser cannot lock the right password out.
const UNLOCKS_PER_ADDRESS = { limit: 10, drainPerSecond: 10 / 60 }
const LINK_FREE_FAILURES = 10

/** Takes one try at a link's password for the client's address, or 429 (see above). */
export async function takeUnlockAttempt(buckets: LeakyBuckets, code: string, address: string): Promise<void> {
  await takeOrRefuse(buckets, `link-unlocks address ${address}`, UNLOCKS_PER_ADDRESS)
  // The counts drain continuously: 9.9 is a tenth failure still, as in failureDelayMs.
  if (Math.ceil(await buckets.level(`link-password-failures ${code}`, FAILURES_DRAIN_PER_SECOND)) < LINK_FREE_FAILURES) return
  const mine = await buckets.level(`link-password-failures ${code} address ${address}`, FAILURES_DRAIN_PER_SECOND)
  if (mine > 0) throw rateLimited(Math.max(1, Math.ceil(mine / FAILURES_DRAIN_PER_SECOND)))
}

/** Counts a wrong guess of a link's password, for the link and for the link and the client's address. */
export async function noteFailedLinkPassword(buckets: LeakyBuckets, code: string, address: string): Promise<void> {
  await Promise.all([
    buckets.add(`link-password-failures ${code}`, FAILURE_LEVEL_CAP, FAILURES_DRAIN_PER_SECOND),
    buckets.add(`link-password-failures ${code} address ${address}`, FAILURE_LEVEL_CAP, FAILURES_DRAIN_PER_SECOND),
  ])
}

// A link's password set by a PATCH is hashed: twenty at once per account, then twenty a minute.
const LINK_PASSWORD_CHANGES = { limit: 20, drainPerSecond: 20 / 60 }

/** Takes one change of a link's password from the account's allowance, or 429 (before any hashing). */
export async function takeLinkPasswordChange(buckets: LeakyBuckets, userId: string): Promise<void> {
  await takeOrRefuse(buckets, `link-password-changes account ${userId}`, LINK_PASSWORD_CHANGES)
}

/** Takes one password change or deletion from the account's and the address's allowance, or 429. */
export async function takeChangeAllowance(buckets: LeakyBuckets, userId: string, address: string): Promise<void> {
  const rules = [
    [`changes account ${userId}`, CHANGES_PER_ACCOUNT],
    [`changes address ${address}`, CHANGES_PER_ADDRESS],
  ] as const
  for (const [key, allowance] of rules) await takeOrRefuse(buckets, key, allowance)
}
