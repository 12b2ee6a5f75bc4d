// A token bucket, refilled lazily from elapsed time (no timers); the clock is passed in.

export const RATE_CAPACITY = 5
export const RATE_PER_SECOND = 5

export interface Decision {
  allowed: boolean
  /** whole tokens left after this request */
  remaining: number
  /** seconds until a token is back; meaningful when denied */
  retryAfterSeconds: number
}

export class TokenBucket {
  tokens: number
  updatedAtMs: number

  constructor(
    nowMs: number,
    readonly capacity = RATE_CAPACITY,
    readonly perSecond = RATE_PER_SECOND,
  ) {
    this.tokens = capacity
    this.updatedAtMs = nowMs
  }

  take(nowMs: number): Decision {
    const elapsed = Math.max(0, nowMs - this.updatedAtMs) / 1000
    const tokens = Math.min(this.capacity, this.tokens + elapsed * this.perSecond)
    this.updatedAtMs = nowMs
    const allowed = tokens >= 1
    this.tokens = allowed ? tokens - 1 : tokens
    return decide(allowed, this.tokens, this.perSecond)
  }

  /** A bucket refills completely after this long; an idle one is then the same as none. */
  isIdle(nowMs: number): boolean {
    return (nowMs - this.updatedAtMs) / 1000 >= this.capacity / this.perSecond
  }
}

export function decide(allowed: boolean, tokens: number, perSecond: number): Decision {
  return {
    allowed,
    remaining: Math.floor(tokens),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond)),
  }
}

/** X-RateLimit-* on every response of the limited routes; Retry-After on a denial (contract §7). */
export function rateHeaders(d: Decision, capacity = RATE_CAPACITY): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(capacity),
    'x-ratelimit-remaining': String(d.remaining),
  }
  if (!d.allowed) headers['retry-after'] = String(d.retryAfterSeconds)
  return headers
}
