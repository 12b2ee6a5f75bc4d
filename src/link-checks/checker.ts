// Every node checks: woken when a check is queued on this node (a link created or changed here,
// an owner's POST .../check) and by a poll for the rest (other nodes' writes, the CLI, checks due
// again). Each claim is a statement that takes due checks as far as the cluster's pace
// (LINK_CHECKS_PER_MINUTE) allows, leased to this node as the webhook deliveries are; at most
// CONCURRENCY under way per node. Nothing here runs on a request's path but an owner's check.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { LinkCheckConfig } from '../config.js'
import type { Sql } from '../db/types.js'
import type { Logger } from '../log.js'
import type { Metrics } from '../metrics.js'
import { BACKOFF_S, checkTarget, type Finding, type Hosts } from './client.js'
import { backOffHost, checkClaimed, claimCheck, claimDueChecks, freeHost, hostBlocked, recordCheck, releaseChecks, takeHost, type ClaimedCheck } from './queries.js'

const CONCURRENCY = 8
/** A first failure is checked again this soon (or at the interval, when that is sooner) */
const CONFIRM_S = 600
/** How long a check waits for a host another check is asking */
const HOST_WAIT_MS = 20_000
const HOST_POLL_MS = 250
/** How long an owner's check waits for one another node is making */
const OTHER_NODE_WAIT_MS = 60_000
/** Which finding of a link's targets it is shown by: the first of these found */
const WORST: readonly Finding['result'][] = ['flagged', 'deferred', 'broken', 'unreachable', 'ok']

/** How often a node looks for due checks without a wake: a quarter of the interval, from 1 s to 5 s. */
export const linkCheckPollMs = (intervalSeconds: number): number => Math.min(5_000, Math.max(1_000, (intervalSeconds * 1000) / 4))

export class LinkChecker {
  readonly node = randomUUID()
  #running = 0
  #claiming = false
  #again = false
  #stopped = false
  #timer: NodeJS.Timeout | undefined
  readonly #inFlight = new Set<Promise<unknown>>()
  readonly #hosts: Hosts

  constructor(
    readonly sql: Sql,
    readonly log: Logger,
    readonly config: Readonly<LinkCheckConfig>,
    readonly metrics: Metrics,
    /** the service's base URL, named in the User-Agent */
    readonly baseUrl: () => string,
    /** a link was stopped or started again: this node's caches forget it (other nodes hear the NOTIFY) */
    readonly forget: (code: string) => void,
  ) {
    this.#hosts = {
      blocked: (host) => hostBlocked(sql, host),
      take: async (host) => {
        const until = performance.now() + HOST_WAIT_MS
        for (;;) {
          const turn = await takeHost(sql, host)
          if (turn === true) return () => freeHost(sql, host)
          if (turn > 0) return turn
          if (performance.now() > until) return 60
          await sleep(HOST_POLL_MS)
        }
      },
      backoff: (host, seconds) => backOffHost(sql, host, seconds, BACKOFF_S),
    }
  }

  /** Looks for due checks every `pollMs` besides the wakes. */
  start(pollMs: number): void {
    this.#timer = setInterval(() => this.wake(), pollMs).unref()
    this.wake()
  }

  /** Claims due checks into the free slots. */
  wake(): void {
    if (this.#stopped) return
    const free = CONCURRENCY - this.#running
    if (free <= 0) return
    if (this.#claiming) {
      this.#again = true
      return
    }
    this.#claiming = true
    claimDueChecks(this.sql, this.node, free, this.config.perMinute).then(
      (claimed) => {
        this.#claiming = false
        if (this.#stopped) return void releaseChecks(this.sql, this.node, claimed.map((c) => c.code)).catch(() => {})
        for (const c of claimed) this.#track(this.#check(c))
        if (this.#again) {
          this.#again = false
          setImmediate(() => this.wake())
        }
      },
      (err: unknown) => {
        this.#claiming = false
        this.log.warn('claiming link checks failed; retrying at the next poll', { err })
      },
    )
  }

  /**
   * An owner's check of one link, now: resolves once its outcome is recorded (or another node's
   * check of it ended); 'no-link' for a code that is not a live link.
   */
  async checkNow(code: string): Promise<'done' | 'no-link'> {
    const claimed = await claimCheck(this.sql, code, this.node)
    if (claimed === undefined) return 'no-link'
    if (claimed !== false) {
      const p = this.#check(claimed)
      this.#inFlight.add(p)
      await p.finally(() => this.#inFlight.delete(p))
      return 'done'
    }
    const until = performance.now() + OTHER_NODE_WAIT_MS
    while (performance.now() < until && (await checkClaimed(this.sql, code))) await sleep(HOST_POLL_MS)
    return 'done'
  }

  #track(p: Promise<void>): void {
    this.#running++
    this.#inFlight.add(p)
    void p.finally(() => {
      this.#running--
      this.#inFlight.delete(p)
      this.wake()
    })
  }

  /** Checks the link's url and each rule's target, one after the other, and records the worst finding. */
  async #check(c: ClaimedCheck): Promise<void> {
    try {
      const targets = [...new Set([c.url, ...c.rules.map((r) => r.url)])]
      const findings: Finding[] = []
      const userAgent = `link-service-link-check (+${this.baseUrl()})`
      for (const target of targets) {
        const f = await checkTarget(target, this.#hosts, { allowPrivate: this.config.allowPrivate, userAgent })
        findings.push(f)
        if (f.result === 'flagged' || f.result === 'deferred') break
      }
      const worst = WORST.map((r) => findings.find((f) => f.result === r)).find((f) => f !== undefined)!
      this.metrics.linkCheck(worst.result)
      const retryS = worst.result === 'deferred' ? (worst.retryS ?? BACKOFF_S) : Math.min(CONFIRM_S, this.config.intervalSeconds)
      const outcome = await recordCheck(this.sql, c.code, this.node, worst, this.config.intervalSeconds, retryS)
      if (outcome?.changed === true) this.forget(c.code)
    } catch (err) {
      // The lease runs out and the check is made again.
      this.log.warn('a link check failed', { err, code: c.code })
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    // A check under way ends within a request's time limit; one not recorded is made again later.
    await Promise.race([Promise.allSettled([...this.#inFlight]), sleep(1_000, undefined, { ref: false })])
  }
}
