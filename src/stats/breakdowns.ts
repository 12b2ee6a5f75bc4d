// The breakdowns of a link's human visits per day: device, browser, OS and country. The tally
// counts each human visit under its keys ("dim\tvalue", dimKey) as it folds it, on the tally
// thread with full statistics (tally-worker.ts): each distinct User-Agent is parsed once and each
// address looked up once while the memos hold them, so the answering thread never parses an agent
// nor looks up an address for the statistics, and no address leaves the thread that folds it.
import type { CountryOf } from './geo.js'
import { Memo } from './memo.js'
import { agentFamilies, OTHER } from './user-agent.js'

export const DIMENSIONS = ['device', 'browser', 'os', 'country'] as const
export type Dimension = (typeof DIMENSIONS)[number]

/** Distinct User-Agents remembered across flushes, and addresses within one. */
const MEMO_ENTRIES = 10_000
/**
 * User-Agents parsed between two takes: a campaign forging a new one on every visit costs the
 * fold at most this many parses a flush; the rest count as "other" (a parse is tens of µs).
 */
export const MAX_PARSES = 20_000

/** A breakdown's value as the tally keys it: tabs sort before any printable character, so keys sort as (dim, value). */
export const dimKey = (dim: Dimension, value: string): string => `${dim}\t${value}`
export function splitDimKey(key: string): [Dimension, string] {
  const tab = key.indexOf('\t')
  return [key.slice(0, tab) as Dimension, key.slice(tab + 1)]
}

/** The keys of an agent none was parsed for: device, browser and OS "other". */
const UNPARSED: readonly string[] = [dimKey('device', OTHER), dimKey('browser', OTHER), dimKey('os', OTHER)]

export class Breakdowns {
  readonly #agents = new Memo<readonly string[]>(MEMO_ENTRIES)
  #countries = new Memo<string>(MEMO_ENTRIES)
  #parses = 0
  readonly #parse = (agent: string): readonly string[] => {
    this.#parses++
    const f = agentFamilies(agent)
    return [dimKey('device', f.device), dimKey('browser', f.browser), dimKey('os', f.os)]
  }
  readonly #place = (address: string): string => dimKey('country', this.countryOf(address))

  constructor(readonly countryOf: CountryOf) {}

  /** The device, browser and OS keys of a human visit's User-Agent (the same strings for the same agent). */
  agentKeys(agent: string): readonly string[] {
    return this.#parses < MAX_PARSES ? this.#agents.get(agent, this.#parse) : (this.#agents.peek(agent) ?? UNPARSED)
  }

  /** The country key of a human visit's client address. */
  countryKey(address: string): string {
    return this.#countries.get(address, this.#place)
  }

  /** At each take: no address is kept past the flush that counts it, and the parses start afresh. */
  forgetAddresses(): void {
    this.#countries = new Memo<string>(MEMO_ENTRIES)
    this.#parses = 0
  }
}
