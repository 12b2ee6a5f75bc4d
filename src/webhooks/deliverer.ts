// Every node delivers: woken when a delivery is queued (on PostgreSQL the change feed's NOTIFY,
// passed on by deliveries.ts), and by a poll in case a notice was missed (or on the embedded
// database, which has no second connection to listen on). At most `concurrency` requests at once
// per node; nothing here runs on a request's path. At least once: a delivery is marked done only
// after its endpoint answered 2xx, so a node that dies mid-way leaves it to another node once its
// lease runs out. The database work is batched, as the node's requests share its CPU and its
// database: outcomes that finish together are recorded in one statement, and a claim takes what
// this node sends in the next second or so at its recent pace (claimSize), held in a local queue.
// What it can no longer start while its lease covers a whole attempt (startable), and what a
// stopping node holds, is given back, due at once for any node and not counted as an attempt
// (releaseClaims).
// Fair shares (FairShares): the next delivery started is the one whose account, then endpoint,
// has the fewest under way; an account never takes the last RESERVED slots while another's wait;
// an endpoint that stalls (no answer at all last time, or one under way for SLOW_MS) gets one
// slot until it answers again; and claims pass over what could not start, so one account's
// stalled endpoints cannot hold everyone's deliveries.
import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import type { WebhookConfig } from '../config.js'
import type { Sql } from '../db/types.js'
import { shortUrl } from '../links/short-code.js'
import type { Logger } from '../log.js'
import { ATTEMPT_SECONDS, claimDue, deleteOldDeliveries, LEASE_SECONDS, recordAttempts, releaseClaims, type Attempt, type Claimed } from './queries.js'
import { FairShares } from './fair-shares.js'
import { settlesWithin } from '../settle.js'
import { postWebhook } from './send.js'
import { sign } from './signature.js'

const RETENTION_EVERY_MS = 10 * 60_000
/** Outcomes finished within this window are recorded in one statement */
const RECORD_EVERY_MS = 50
/** How long a stop lets requests under way finish */
const STOP_WAIT_MS = 1_000
/** Claimed deliveries held waiting at most: past it, no claim until some start */
const MAX_QUEUED = 200
/** A claim reaches this far ahead at the node's recent pace */
const CLAIM_AHEAD_MS = 1_000
/** and takes at most this many rows */
export const MAX_CLAIM = 100
/** Rows to claim: the free slots at least, and what `pacePerSecond` sends in CLAIM_AHEAD_MS, up to MAX_CLAIM. */
export function claimSize(free: number, pacePerSecond: number): number {
  return Math.max(free, Math.min(MAX_CLAIM, Math.floor((pacePerSecond * CLAIM_AHEAD_MS) / 1000)))
}

/** Whether a delivery claimed at `claimedAt` may still start: its lease must outlast a whole attempt. */
export function startable(claimedAt: number, now: number): boolean {
  return now - claimedAt <= (LEASE_SECONDS - ATTEMPT_SECONDS) * 1000
}

export class WebhookDeliverer {
  #running = 0
  /** claimed, not started yet, oldest first (with when they were claimed) */
  #queue: Array<{ claim: Claimed; at: number }> = []
  readonly #shares: FairShares
  #slowCheck: NodeJS.Timeout | undefined
  /** deliveries finished since #paceSince, and the pace measured over the last such second */
  #finished = 0
  #paceSince = performance.now()
  #pace = 0
  #claiming = false
  #again = false
  #stopped = false
  #timer: NodeJS.Timeout | undefined
  #sweep: NodeJS.Timeout | undefined
  readonly #inFlight = new Set<Promise<void>>()
  #toRecord: Attempt[] = []
  #recordTimer: NodeJS.Timeout | undefined
  /** Connections kept alive between deliveries: a busy endpoint is not a new TCP (and TLS) handshake per event. */
  readonly #agents: { http: HttpAgent; https: HttpsAgent }

  constructor(
    readonly sql: Sql,
    readonly log: Logger,
    readonly config: Readonly<WebhookConfig>,
    /** the base for short_url in link events */
    readonly baseUrl: () => string,
  ) {
    this.#shares = new FairShares(config.concurrency)
    const options = { keepAlive: true, maxSockets: config.concurrency, timeout: 30_000 }
    this.#agents = { http: new HttpAgent(options), https: new HttpsAgent(options) }
  }

  /** Looks for due deliveries now and every `pollMs`, besides the wakes. */
  start(pollMs: number): void {
    this.#timer = setInterval(() => this.wake(), pollMs).unref()
    this.#sweep = setInterval(() => {
      deleteOldDeliveries(this.sql, this.config.retentionDays).catch((err: unknown) => this.log.warn('webhook retention sweep failed', { err }))
    }, RETENTION_EVERY_MS).unref()
    this.wake()
  }

  /** Starts what is queued, as far as free slots and fair shares allow; claims more when a slot is left. */
  wake(): void {
    if (this.#stopped) return
    const now = performance.now()
    this.#startQueued(now)
    const free = this.config.concurrency - this.#running
    // What is still queued could not start: a claim passes over it. A claim is a statement: with
    // requests under way, it waits until half the slots are free, unless some are stalled.
    if (free <= 0 || this.#queue.length >= MAX_QUEUED) return
    if (this.#running > 0 && free < this.config.concurrency / 2 && !this.#shares.anyStalled(now)) return
    if (this.#claiming) {
      this.#again = true
      return
    }
    this.#claiming = true
    const limit = claimSize(free, this.#paceNow(now))
    claimDue(this.sql, limit, this.#shares.skips(now, this.#queue.map((q) => q.claim))).then(
      (claimed) => {
        this.#claiming = false
        if (this.#stopped) return this.#release(claimed) // a claim that ended after the stop
        const at = performance.now()
        for (const claim of claimed) this.#queue.push({ claim, at })
        this.#startQueued(at)
        // A full claim may have left more behind; a notice during the claim may be new work.
        if (this.#again || claimed.length === limit) {
          this.#again = false
          setImmediate(() => this.wake())
        }
      },
      (err: unknown) => {
        this.#claiming = false
        this.log.warn('claiming webhook deliveries failed; retrying at the next poll', { err })
      },
    )
  }

  /**
   * Starts queued deliveries into the free slots, each time the one the fair shares pick; one
   * whose lease no longer covers an attempt is given back.
   */
  #startQueued(now: number): void {
    const stale = this.#queue.filter((q) => !startable(q.at, now)).map((q) => q.claim)
    if (stale.length > 0) this.#queue = this.#queue.filter((q) => startable(q.at, now))
    this.#release(stale)
    while (this.#running < this.config.concurrency && this.#queue.length > 0) {
      const i = this.#shares.pick(this.#queue.map((q) => q.claim), now)
      if (i === -1) break
      const { claim } = this.#queue.splice(i, 1)[0]!
      this.#track(claim, this.#deliver(claim))
    }
  }

  #track(claim: Claimed, p: Promise<boolean>): void {
    this.#running++
    const started = this.#shares.started(claim, performance.now())
    const done = p.then((answered) => this.#shares.ended(claim, started, answered))
    this.#inFlight.add(done)
    // A delivery under way for SLOW_MS makes its endpoint stalled: look again then.
    this.#slowCheck ??= setTimeout(() => {
      this.#slowCheck = undefined
      this.wake()
    }, FairShares.SLOW_MS + 10).unref()
    void done.finally(() => {
      this.#running--
      this.#inFlight.delete(done)
      this.#notePace()
      this.wake()
    })
  }

  /** Deliveries a second lately: after a quiet spell, the spell counts (a burst after an hour is not claimed at the old pace). */
  #paceNow(now: number): number {
    const elapsed = now - this.#paceSince
    return elapsed >= 2_000 ? (this.#finished * 1_000) / elapsed : this.#pace
  }

  /** Claims not attempted go back at once, not counted as attempts (see releaseClaims). */
  #release(claims: Claimed[]): void {
    if (claims.length === 0) return
    const p = releaseClaims(this.sql, claims).catch((err: unknown) => {
      // Their leases run out instead: they are sent later, one attempt further along the schedule.
      this.log.warn('giving back webhook claims failed', { err, deliveries: claims.map((c) => c.id) })
    })
    this.#inFlight.add(p)
    void p.finally(() => this.#inFlight.delete(p))
  }

  #notePace(): void {
    this.#finished++
    const now = performance.now()
    if (now - this.#paceSince >= 1_000) {
      this.#pace = (this.#finished * 1_000) / (now - this.#paceSince)
      this.#finished = 0
      this.#paceSince = now
    }
  }

  /** Sends one delivery and queues its outcome; resolves whether the endpoint answered at all. */
  async #deliver(c: Claimed): Promise<boolean> {
    const timestamp = Math.floor(Date.now() / 1000)
    const body = JSON.stringify({ type: c.event, timestamp: c.created_at.toISOString(), data: this.#data(c) })
    const headers = { 'webhook-id': c.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': sign(c.secret, c.id, timestamp, body) }
    let target: URL
    try {
      target = new URL(c.url)
    } catch {
      this.#record(c, { ok: false, status: null, error: 'the endpoint url is not valid', durationMs: 0 })
      return true
    }
    const allowed = target.protocol === 'https:' || (target.protocol === 'http:' && this.config.allowHttp)
    const r = allowed
      ? await postWebhook(target, headers, body, this.config.allowPrivate, this.#agents)
      : { error: `${target.protocol} endpoints are not allowed`, durationMs: 0 }
    this.#record(c, { ok: r.error === undefined, status: r.status ?? null, error: r.error ?? null, durationMs: r.durationMs })
    return !allowed || r.status !== undefined
  }

  /** Link events carry the link's short_url, as the API shows it. */
  #data(c: Claimed): Record<string, unknown> {
    const code = c.data.code
    if (typeof code !== 'string' || !c.event.startsWith('link.')) return c.data
    const { code: _, ...rest } = c.data
    return { code, short_url: shortUrl(this.baseUrl(), code), ...rest }
  }

  /** Queued for the next batch; the slot is free at once (the lease keeps the delivery this node's meanwhile). */
  #record(c: Claimed, outcome: Omit<Attempt, 'claim' | 'retryInSeconds'>): void {
    const schedule = this.config.retrySeconds
    const retryInSeconds = c.attempts <= schedule.length ? schedule[c.attempts - 1]! : null
    this.#toRecord.push({ claim: c, ...outcome, retryInSeconds })
    this.#recordTimer ??= setTimeout(() => this.#recordNow(), RECORD_EVERY_MS)
  }

  #recordNow(): void {
    clearTimeout(this.#recordTimer)
    this.#recordTimer = undefined
    const batch = this.#toRecord
    if (batch.length === 0) return
    this.#toRecord = []
    const p = recordAttempts(this.sql, batch).catch((err: unknown) => {
      // The leases run out and the deliveries are sent again: at least once.
      this.log.warn('recording webhook attempts failed; they will be sent again', { err, deliveries: batch.map((a) => a.claim.id) })
    })
    this.#inFlight.add(p)
    void p.finally(() => this.#inFlight.delete(p))
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#slowCheck)
    clearInterval(this.#timer)
    clearInterval(this.#sweep)
    this.#release(this.#queue.splice(0).map((q) => q.claim))
    // No wait on a database that may be gone: an attempt not recorded is sent again once its
    // lease runs out (at least once).
    await settlesWithin(
      (async () => {
        while (this.#inFlight.size > 0 || this.#toRecord.length > 0) {
          this.#recordNow()
          await Promise.allSettled([...this.#inFlight])
        }
      })(),
      STOP_WAIT_MS,
    )
    this.#agents.http.destroy()
    this.#agents.https.destroy()
  }
}
