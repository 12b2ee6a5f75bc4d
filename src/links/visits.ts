// Visit counting: counted in memory on the redirect path, written in batches, one transaction per
// flush: each link's total and, per UTC day, its humans and bots, referrer hosts and the hashes of
// its distinct human visitors. A failed flush keeps its counts for the next one; a crash loses at
// most one interval.
//
// The redirect path only appends what Node has already parsed (the code, the clock, and the
// User-Agent, Referer and address strings) to flat arrays. Classifying, parsing and hashing are
// done in bulk when the arrays are folded (every FOLD_EVERY visits, and at each flush), once per
// distinct string: the cached redirect keeps its rate (docs/performance.md).
import { hash } from 'node:crypto'
import type { BlockList } from 'node:net'
import { isConnectionError, type Sql } from '../db/index.js'
import type { WriteHealth } from '../health.js'
import type { Logger } from '../log.js'
import type { Metrics } from '../metrics.js'
import { clientAddress } from '../ratelimit/client-ip.js'
import { isBot } from './bots.js'
import { DIRECT, OTHER, referrerHost } from './referrer.js'
import { daySalt, writeVisitBatch, type VisitBatch } from './stats-queries.js'

const DAY_MS = 86_400_000
/** Raw visits kept before they are folded: bounds the strings held between flushes. */
const FOLD_EVERY = 4_096
/** Distinct referrer hosts kept per link and day between flushes; more go to "other". */
const MAX_PENDING_HOSTS = 100
/** Distinct visitors kept between flushes (a long database outage); more are not counted. */
const MAX_PENDING_VISITORS = 100_000
/**
 * How much of a User-Agent tells visitors apart: real ones are shorter, and a flood of 16 KiB
 * agents cannot make the pending visitors large (100,000 × 300 bytes at most).
 */
const AGENT_CHARS = 256
/** Hex digits of a visitor hash kept: 16 bytes. */
const HASH_HEX = 32
/** Entries of the folds' memos (agent → bot?, Referer → host, peer and forwarded → address) before they start afresh. */
const MEMO_ENTRIES = 20_000
/** Longer header values are worked out each time rather than kept (a memo of 16 KiB keys would be large). */
const MEMO_KEY_CHARS = 512

interface DayPending {
  humans: number
  bots: number
  referrers: Map<string, number>
  /** human visitors: client address → user agents; hashed only when written */
  visitors: Map<string, Set<string>>
}

interface Pending {
  count: number
  lastAtMs: number
  /** by day number (days since 1970-01-01, UTC); empty when statistics are off */
  days: Map<number, DayPending>
}

export interface VisitOptions {
  flushMs: number
  /** per-day statistics (VISIT_STATS); off: only each link's total */
  stats: boolean
  trustProxy: BlockList | undefined
  /** told how each flush went, for /healthz */
  writes?: WriteHealth
  /** told how long each flush took, and of flushes the database refused */
  metrics?: Pick<Metrics, 'visitFlush' | 'databaseError'>
}

/** What a visit keeps of its request: read by whoever holds the request (redirect.ts). */
export interface Visitor {
  userAgent: string | undefined
  referer: string | undefined
  /** X-Forwarded-For, when given */
  forwardedFor: string | undefined
  /** the connection's peer address */
  peer: string | undefined
}

export class VisitCounter {
  // The raw visits since the last fold, one array per fact.
  #codes: string[] = []
  #times: number[] = []
  #agents: Array<string | undefined> = []
  #referers: Array<string | undefined> = []
  #peers: Array<string | undefined> = []
  #forwarded: Array<string | undefined> = []

  #pending = new Map<string, Pending>()
  readonly #memo = {
    bots: new Map<string | undefined, boolean>(),
    hosts: new Map<string | undefined, string>(),
    addresses: new Map<string | undefined, Map<string | undefined, string>>(),
  }
  #visitors = 0
  #visitorsDropped = false
  /** day → salt, as hex (what is hashed) */
  readonly #salts = new Map<string, string>()
  #timer: NodeJS.Timeout | undefined
  #flushing: Promise<void> = Promise.resolve()

  constructor(
    readonly sql: Sql,
    readonly log: Logger,
    readonly options: VisitOptions,
  ) {}

  start(): void {
    this.#timer = setInterval(() => void this.flush(), this.options.flushMs).unref()
  }

  /** Visits counted and not yet written. */
  get waiting(): number {
    let n = this.#codes.length
    for (const p of this.#pending.values()) n += p.count
    return n
  }

  /** A GET redirect served. The hot path: appends, nothing else. */
  record(code: string, visitor: Visitor): void {
    this.#codes.push(code)
    this.#times.push(Date.now())
    if (this.options.stats) {
      this.#agents.push(visitor.userAgent)
      this.#referers.push(visitor.referer)
      this.#peers.push(visitor.peer)
      this.#forwarded.push(this.options.trustProxy === undefined ? undefined : visitor.forwardedFor)
    }
    if (this.#codes.length >= FOLD_EVERY) this.#fold()
  }

  /** Turns the raw visits into per-link, per-day counts. */
  #fold(): void {
    const n = this.#codes.length
    if (n === 0) return
    const [codes, times, agents, referers, peers, forwarded] = [this.#codes, this.#times, this.#agents, this.#referers, this.#peers, this.#forwarded]
    this.#codes = []
    this.#times = []
    this.#agents = []
    this.#referers = []
    this.#peers = []
    this.#forwarded = []
    // Each distinct User-Agent is classified once, each distinct Referer parsed once, and each
    // distinct (peer, X-Forwarded-For) resolved to a client address once, for as long as the
    // memos last (MEMO_ENTRIES). Keys are the header strings themselves, never strings built
    // from them: V8 hashes a string once and keeps the hash, while a built key would be copied
    // and hashed again on every visit.
    const { bots, hosts, addresses } = this.#memo
    if (bots.size + hosts.size + addresses.size > MEMO_ENTRIES) {
      bots.clear()
      hosts.clear()
      addresses.clear()
    }
    for (let i = 0; i < n; i++) {
      const code = codes[i]!
      const at = times[i]!
      let p = this.#pending.get(code)
      if (p === undefined) this.#pending.set(code, (p = { count: 0, lastAtMs: 0, days: new Map() }))
      p.count++
      if (at > p.lastAtMs) p.lastAtMs = at
      if (!this.options.stats) continue
      const dayNumber = Math.floor(at / DAY_MS)
      let day = p.days.get(dayNumber)
      if (day === undefined) p.days.set(dayNumber, (day = { humans: 0, bots: 0, referrers: new Map(), visitors: new Map() }))
      const agent = agents[i]
      let bot = bots.get(agent)
      if (bot === undefined) {
        bot = isBot(agent)
        if (agent === undefined || agent.length <= MEMO_KEY_CHARS) bots.set(agent, bot)
      }
      const referer = referers[i]
      let host = hosts.get(referer)
      if (host === undefined) {
        host = referrerHost(referer)
        if (referer === undefined || referer.length <= MEMO_KEY_CHARS) hosts.set(referer, host)
      }
      const seen = day.referrers.get(host)
      if (seen !== undefined) day.referrers.set(host, seen + 1)
      else if (host === DIRECT || host === OTHER || day.referrers.size < MAX_PENDING_HOSTS) day.referrers.set(host, 1)
      else day.referrers.set(OTHER, (day.referrers.get(OTHER) ?? 0) + 1)
      if (bot) {
        day.bots++
        continue
      }
      day.humans++
      const peer = peers[i]
      let byForward = addresses.get(peer)
      if (byForward === undefined) addresses.set(peer, (byForward = new Map()))
      let address = byForward.get(forwarded[i])
      if (address === undefined) byForward.set(forwarded[i], (address = clientAddress(peer, forwarded[i], this.options.trustProxy)))
      let agentsSeen = day.visitors.get(address)
      if (agentsSeen === undefined) day.visitors.set(address, (agentsSeen = new Set()))
      const who = agent!.length > AGENT_CHARS ? agent!.slice(0, AGENT_CHARS) : agent!
      if (agentsSeen.has(who)) continue
      if (this.#visitors >= MAX_PENDING_VISITORS) {
        this.#visitorsDropped = true
        continue
      }
      agentsSeen.add(who)
      this.#visitors++
    }
  }

  /** Writes what has been counted. Flushes never overlap. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write())
    return this.#flushing
  }

  async #write(): Promise<void> {
    this.#fold()
    if (this.#pending.size === 0) return
    const batch = this.#pending
    this.#pending = new Map()
    this.#visitors = 0
    if (this.#visitorsDropped) {
      this.#visitorsDropped = false
      this.log.warn('too many visitors waited for a flush; some were not counted as unique')
    }
    const started = performance.now()
    try {
      await writeVisitBatch(this.sql, await this.#toRows(batch))
      this.options.writes?.record(true)
      this.options.metrics?.visitFlush((performance.now() - started) / 1000)
    } catch (err) {
      this.options.writes?.record(false)
      if (isConnectionError(err)) this.options.metrics?.databaseError()
      this.log.warn('visit flush failed; keeping the counts for the next one', { err, codes: batch.size })
      this.#putBack(batch)
    }
  }

  /** The batch as rows, in code then day order; visitors hashed under their day's salt. */
  async #toRows(batch: Map<string, Pending>): Promise<VisitBatch> {
    const rows: VisitBatch = {
      links: { codes: [], counts: [], lastAt: [] },
      days: { codes: [], days: [], humans: [], bots: [] },
      referrers: { codes: [], days: [], hosts: [], visits: [] },
      hashes: { codes: [], days: [], hashes: [] },
    }
    for (const [code, p] of [...batch].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      rows.links.codes.push(code)
      rows.links.counts.push(p.count)
      rows.links.lastAt.push(new Date(p.lastAtMs).toISOString())
      for (const [dayNumber, d] of [...p.days].sort(([a], [b]) => a - b)) {
        const day = dateOf(dayNumber)
        rows.days.codes.push(code)
        rows.days.days.push(day)
        rows.days.humans.push(d.humans)
        rows.days.bots.push(d.bots)
        for (const [host, visits] of d.referrers) {
          rows.referrers.codes.push(code)
          rows.referrers.days.push(day)
          rows.referrers.hosts.push(host)
          rows.referrers.visits.push(visits)
        }
        if (d.visitors.size === 0) continue
        const salt = await this.#salt(day)
        for (const [address, agents] of d.visitors) {
          for (const agent of agents) {
            rows.hashes.codes.push(code)
            rows.hashes.days.push(day)
            // SHA-256 of secret salt, code and visitor (the salt first and of fixed length, so
            // no input can pass for another); the code in it keeps one visitor's hashes on two
            // links apart. crypto.hash is one call, a third of createHmac's cost per visitor.
            rows.hashes.hashes.push(hash('sha256', `${salt}\n${code}\n${address}\n${agent}`, 'hex').slice(0, HASH_HEX))
          }
        }
      }
    }
    return rows
  }

  /** Every node hashes a day's visitors under the same salt (see stats-queries.ts daySalt). */
  async #salt(day: string): Promise<string> {
    let salt = this.#salts.get(day)
    if (salt === undefined) {
      salt = (await daySalt(this.sql, day)).toString('hex')
      // Only the last few days are wanted: forget older salts as newer ones arrive.
      const oldest = dateOf(Math.floor(Date.now() / DAY_MS) - 2)
      for (const d of this.#salts.keys()) if (d < oldest) this.#salts.delete(d)
      this.#salts.set(day, salt)
    }
    return salt
  }

  /** A failed batch goes back into what is pending, merged with what was counted since. */
  #putBack(batch: Map<string, Pending>): void {
    for (const [code, p] of batch) {
      const now = this.#pending.get(code)
      if (now === undefined) {
        this.#pending.set(code, p)
        for (const d of p.days.values()) this.#visitors += countVisitors(d)
        continue
      }
      now.count += p.count
      now.lastAtMs = Math.max(now.lastAtMs, p.lastAtMs)
      for (const [dayNumber, d] of p.days) {
        const into = now.days.get(dayNumber)
        if (into === undefined) {
          now.days.set(dayNumber, d)
          this.#visitors += countVisitors(d)
          continue
        }
        into.humans += d.humans
        into.bots += d.bots
        for (const [host, visits] of d.referrers) into.referrers.set(host, (into.referrers.get(host) ?? 0) + visits)
        for (const [address, agents] of d.visitors) {
          let seen = into.visitors.get(address)
          if (seen === undefined) into.visitors.set(address, (seen = new Set()))
          for (const agent of agents) {
            if (seen.has(agent)) continue
            seen.add(agent)
            this.#visitors++
          }
        }
      }
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.flush()
  }
}

const countVisitors = (d: DayPending): number => {
  let n = 0
  for (const agents of d.visitors.values()) n += agents.size
  return n
}

/** "YYYY-MM-DD" of a day number (days since 1970-01-01, UTC). */
export const dateOf = (dayNumber: number): string => new Date(dayNumber * DAY_MS).toISOString().slice(0, 10)
