// The visit tally: what the redirect path records, folded into per-link, per-day counts. Pure:
// no clock, no timer, no database; the flusher (visits.ts) writes what it takes.
//
// The redirect path only appends what Node has already parsed (the code, the time, and the
// User-Agent, Referer and address strings) to flat arrays. Classifying, parsing (the breakdowns'
// families and countries, breakdowns.ts) and resolving addresses are done in bulk when the arrays
// are folded (every FOLD_EVERY visits, and at each flush), once per distinct string: with full
// statistics on the tally thread, so the cached redirect keeps its rate (docs/performance.md).
import type { BlockList } from 'node:net'
import { clientKeyOf } from '../address.js'
import { clientAddress } from '../ratelimit/client-ip.js'
import { isBot } from './bots.js'
import { Breakdowns } from './breakdowns.js'
import { UNKNOWN_COUNTRY, type CountryOf } from './geo.js'
import { agentCut } from './user-agent.js'
import { DIRECT, OTHER, referrerHost } from './referrer.js'
import { unionRegisters, visitorRegister } from './sketch.js'

export const DAY_MS = 86_400_000
/**
 * Raw visits kept before they are folded: bounds the strings held between flushes, and the pause
 * of a fold (docs/decisions.md says why not more, nor fewer).
 */
const FOLD_EVERY = 512
/** Distinct referrer hosts kept per link and day between flushes; more go to "other". */
const MAX_PENDING_HOSTS = 100
/** Distinct visitors kept between flushes (a long database outage); more are not counted. */
const MAX_PENDING_VISITORS = 100_000
/** Entries of the folds' memos (agent → bot?, Referer → host, peer and forwarded → address) before they start afresh. */
const MEMO_ENTRIES = 20_000
/** Longer Referers are worked out each time rather than kept (a memo of 16 KiB keys would be large). */
const MEMO_KEY_CHARS = 512

export interface DayPending {
  humans: number
  bots: number
  referrers: Map<string, number>
  /** human visitors, by visitorKey (their client address), not yet hashed */
  visitors: Set<string>
  /** human visitors already hashed under their day's salt, as sketch registers (sketch.ts visitorRegister); a take given the salt turns `visitors` into these */
  registers: Uint16Array
  /** human visits by device, browser, OS and country, by dimKey (breakdowns.ts): at most a few hundred keys */
  dims: Map<string, number>
}

export interface Pending {
  count: number
  lastAtMs: number
  /** by day number (days since 1970-01-01, UTC); empty when statistics are off */
  days: Map<number, DayPending>
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

/** Raw visits not yet folded, one array per fact (`forwarded` may be empty: no trusted proxy). */
export interface RawVisits {
  codes: string[]
  times: number[]
  agents: Array<string | undefined>
  referers: Array<string | undefined>
  peers: Array<string | undefined>
  forwarded: Array<string | undefined>
}

export const noVisits = (): RawVisits => ({ codes: [], times: [], agents: [], referers: [], peers: [], forwarded: [] })

/** Appends a visit to `raw`: the hot path. `headers`: its User-Agent, Referer and addresses too (full statistics). */
export function appendVisit(raw: RawVisits, code: string, visitor: Visitor, atMs: number, headers: boolean, trustProxy: BlockList | undefined): void {
  raw.codes.push(code)
  raw.times.push(atMs)
  if (!headers) return
  // Cut here, not when folded: a long one is neither held nor handed to the tally thread whole.
  raw.agents.push(visitor.userAgent === undefined ? undefined : agentCut(visitor.userAgent))
  raw.referers.push(visitor.referer)
  raw.peers.push(visitor.peer)
  if (trustProxy !== undefined) raw.forwarded.push(visitor.forwardedFor)
}

/** What the flusher takes: the counts, and whether some visitors were not counted as unique. */
export interface Taken {
  batch: Map<string, Pending>
  visitorsDropped: boolean
}

export class VisitTally {
  /** the raw visits since the last fold */
  #raw = noVisits()

  #pending = new Map<string, Pending>()
  readonly #memo = {
    bots: new Map<string | undefined, boolean>(),
    hosts: new Map<string | undefined, string>(),
    visitors: new Map<string | undefined, Map<string | undefined, string>>(),
  }
  #visitors = 0
  #visitorsDropped = false
  readonly #stats: boolean
  readonly #trustProxy: BlockList | undefined
  readonly #breakdowns: Breakdowns

  /** `stats`: per-day statistics (VISIT_STATS); off, only each link's total. `countryOf`: without it, every country is "unknown". */
  constructor(stats: boolean, trustProxy: BlockList | undefined, countryOf: CountryOf = () => UNKNOWN_COUNTRY) {
    this.#stats = stats
    this.#trustProxy = trustProxy
    this.#breakdowns = new Breakdowns(countryOf)
  }

  /** Visits recorded and not yet taken. */
  get waiting(): number {
    let n = this.#raw.codes.length
    for (const p of this.#pending.values()) n += p.count
    return n
  }

  /** A visit at `atMs`. The hot path: appends, nothing else. */
  record(code: string, visitor: Visitor, atMs: number): void {
    appendVisit(this.#raw, code, visitor, atMs, this.#stats, this.#trustProxy)
    if (this.#raw.codes.length >= FOLD_EVERY) this.fold()
  }

  /** Turns the raw visits into per-link, per-day counts. */
  fold(): void {
    const raw = this.#raw
    if (raw.codes.length === 0) return
    this.#raw = noVisits()
    this.foldRaw(raw)
  }

  /** Folds visits recorded elsewhere (the answering thread's, tally-thread.ts) into the counts. */
  foldRaw({ codes, times, agents, referers, peers, forwarded }: RawVisits): void {
    const n = codes.length
    // Each distinct User-Agent is classified once, each distinct Referer parsed once, and each
    // distinct (peer, X-Forwarded-For) resolved to a client address once, for as long as the
    // memos last (MEMO_ENTRIES). Keys are the header strings themselves, never strings built
    // from them: V8 hashes a string once and keeps the hash, while a built key would be copied
    // and hashed again on every visit.
    const { bots, hosts, visitors } = this.#memo
    if (bots.size + hosts.size + visitors.size > MEMO_ENTRIES) {
      bots.clear()
      hosts.clear()
      visitors.clear()
    }
    for (let i = 0; i < n; i++) {
      const code = codes[i]!
      const at = times[i]!
      let p = this.#pending.get(code)
      if (p === undefined) this.#pending.set(code, (p = { count: 0, lastAtMs: 0, days: new Map() }))
      p.count++
      if (at > p.lastAtMs) p.lastAtMs = at
      if (!this.#stats) continue
      const dayNumber = Math.floor(at / DAY_MS)
      let day = p.days.get(dayNumber)
      if (day === undefined) p.days.set(dayNumber, (day = newDay()))
      const agent = agents[i]
      let bot = bots.get(agent)
      if (bot === undefined) bots.set(agent, (bot = isBot(agent)))
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
      let byForward = visitors.get(peer)
      if (byForward === undefined) visitors.set(peer, (byForward = new Map()))
      let who = byForward.get(forwarded[i])
      if (who === undefined) byForward.set(forwarded[i], (who = visitorKey(clientAddress(peer, forwarded[i], this.#trustProxy))))
      const dims = day.dims
      for (const key of this.#breakdowns.agentKeys(agent!)) dims.set(key, (dims.get(key) ?? 0) + 1)
      const country = this.#breakdowns.countryKey(who)
      dims.set(country, (dims.get(country) ?? 0) + 1)
      if (day.visitors.has(who)) continue
      if (this.#visitors >= MAX_PENDING_VISITORS) {
        this.#visitorsDropped = true
        continue
      }
      day.visitors.add(who)
      this.#visitors++
    }
  }

  /**
   * Everything counted so far (folded first); the tally starts afresh. The visitors of the days
   * whose salt is in `salts` (by day number) come hashed, as registers: off the answering thread
   * when this tally is the tally thread's.
   */
  take(salts?: ReadonlyMap<number, string>): Taken {
    this.fold()
    if (salts !== undefined && salts.size > 0) {
      for (const [code, p] of this.#pending) {
        for (const [dayNumber, d] of p.days) {
          const salt = salts.get(dayNumber)
          if (salt === undefined || d.visitors.size === 0) continue
          d.registers = dayRegisters(code, d, salt)
          d.visitors = new Set()
        }
      }
    }
    const taken = { batch: this.#pending, visitorsDropped: this.#visitorsDropped }
    this.#pending = new Map()
    this.#visitors = 0
    this.#visitorsDropped = false
    this.#breakdowns.forgetAddresses()
    return taken
  }

  /** A batch that was surely not written goes back into what is pending, merged with what was counted since. */
  putBack(batch: Map<string, Pending>): void {
    this.#visitors += mergeInto(this.#pending, batch)
  }
}

/**
 * The batches as one, for reading only. One batch is itself: copying a flush of 100,000 links held
 * the event loop for a good part of a second. Several are merged into a copy, the originals left
 * as they are (a flush may try them again).
 */
export function merged(batches: ReadonlyArray<Map<string, Pending>>): ReadonlyMap<string, Pending> {
  if (batches.length === 1) return batches[0]!
  const into = new Map<string, Pending>()
  for (const batch of batches) mergeInto(into, batch, true)
  return into
}

/** Adds `from` to `into`; returns how many visitors were new to it. `copy`: share nothing with `from`. */
function mergeInto(into: Map<string, Pending>, from: Map<string, Pending>, copy = false): number {
  let added = 0
  for (const [code, p] of from) {
    let now = into.get(code)
    if (now === undefined) {
      if (!copy) {
        into.set(code, p)
        for (const d of p.days.values()) added += countVisitors(d)
        continue
      }
      into.set(code, (now = { count: 0, lastAtMs: 0, days: new Map() }))
    }
    now.count += p.count
    now.lastAtMs = Math.max(now.lastAtMs, p.lastAtMs)
    for (const [dayNumber, d] of p.days) {
      let day = now.days.get(dayNumber)
      if (day === undefined) {
        if (!copy) {
          now.days.set(dayNumber, d)
          added += countVisitors(d)
          continue
        }
        now.days.set(dayNumber, (day = newDay()))
      }
      day.humans += d.humans
      day.bots += d.bots
      for (const [host, visits] of d.referrers) day.referrers.set(host, (day.referrers.get(host) ?? 0) + visits)
      for (const [key, visits] of d.dims) day.dims.set(key, (day.dims.get(key) ?? 0) + visits)
      day.registers = unionRegisters(day.registers, d.registers)
      for (const who of d.visitors) {
        if (day.visitors.has(who)) continue
        day.visitors.add(who)
        added++
      }
    }
  }
  return added
}

const NO_REGISTERS = new Uint16Array(0)
const newDay = (): DayPending => ({ humans: 0, bots: 0, referrers: new Map(), visitors: new Set(), registers: NO_REGISTERS, dims: new Map() })

/** A day's visitors as registers: those hashed already, and the rest hashed under `salt`. Reads `d`, never changes it. */
export function dayRegisters(code: string, d: DayPending, salt: string): Uint16Array {
  if (d.visitors.size === 0) return d.registers
  const fresh = new Uint16Array(d.visitors.size)
  let i = 0
  for (const who of d.visitors) fresh[i++] = visitorRegister(salt, code, who)
  return unionRegisters(d.registers, fresh)
}

const countVisitors = (d: DayPending): number => d.visitors.size

/**
 * Who counts as one visitor: the client address alone, whatever User-Agent it sends, so no
 * client can pass for many by varying it; an IPv6 address by its /64, which one subscriber
 * holds whole (address.ts). (Visitors behind one NAT count as one.)
 */
const visitorKey = clientKeyOf
