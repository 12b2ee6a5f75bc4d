// A link's state, decided in one place for every path that answers a visitor: the redirect (from
// the cache and after a read), the preview and the pages for people. The order of the stops:
//   1. stopped by an operator, reports or the block list (410 LINK_DISABLED)
//   2. expired (410 LINK_EXPIRED)
//   3. not started yet (404 LINK_NOT_FOUND, as an unknown code)
//   4. used up, its max_visits served (410 LINK_EXHAUSTED)
//   5. a password to ask (401 LINK_PASSWORD_REQUIRED)
// A link past all five redirects. The stops are the cache's small values (not objects), so the
// hot path compares them without building anything.
import { HttpError, linkDisabled, linkExhausted, linkExpired, linkNotFound } from '../http/errors.js'

/** No such link, or not started: 404. */
export const MISSING = null
/** Its expires_at has passed: 410. */
export const EXPIRED = false
/** An operator stopped the link (or its owner, or its host), or reports suspended it: 410. */
export const DISABLED = 0
/** Its cap (max_visits) was reached: 410. */
export const EXHAUSTED = -1
/** The expiry of a link that never expires. */
export const NO_EXPIRY = Infinity
/** The start of a link that has no starts_at. */
export const NO_START = 0

/** A code that does not redirect. */
export type Stop = typeof MISSING | typeof EXPIRED | typeof DISABLED | typeof EXHAUSTED

/**
 * Where a live link stops, in the order above, or undefined when it goes on (to its password or
 * its destination). The clock is read only for a link that expires or starts.
 */
export function stopOf(stopped: boolean, exhausted: boolean, expiresAt: number, startsAt: number, wallNow: () => number): Stop | undefined {
  if (stopped) return DISABLED
  if (expiresAt !== NO_EXPIRY || startsAt !== NO_START) {
    const now = wallNow()
    if (expiresAt <= now) return EXPIRED
    if (startsAt > now) return MISSING
  }
  return exhausted ? EXHAUSTED : undefined
}

/** What a stop answers: the error (JSON), its label in the metrics, and the page a browser gets. */
export interface StopAnswer {
  error: () => HttpError
  metric: 'unknown' | 'expired' | 'disabled' | 'exhausted'
  /** the visitor page; a stopped link's page names why (disabled, suspended, blocked), read when it is built */
  page: 'unknown' | 'expired' | 'exhausted' | 'stopped'
}

const ANSWERS = new Map<Stop, StopAnswer>([
  [MISSING, { error: linkNotFound, metric: 'unknown', page: 'unknown' }],
  [EXPIRED, { error: linkExpired, metric: 'expired', page: 'expired' }],
  [DISABLED, { error: linkDisabled, metric: 'disabled', page: 'stopped' }],
  [EXHAUSTED, { error: linkExhausted, metric: 'exhausted', page: 'exhausted' }],
])

export const answerOf = (stop: Stop): StopAnswer => ANSWERS.get(stop)!

/** Every stop, for what is prepared once per stop. */
export const STOPS: readonly Stop[] = [...ANSWERS.keys()]
