// The breakdowns of a link's human visits per day: device, browser, OS and country. The flush turns
// the tally's counts by User-Agent and by client address into counts by family and country; each
// distinct User-Agent is parsed once and each address looked up once while the memos hold them, so
// a flush costs a lookup per distinct string, not per visit.
import type { CountryOf } from './geo.js'
import { Memo } from './memo.js'
import { agentFamilies, type AgentFamilies } from './user-agent.js'

export const DIMENSIONS = ['device', 'browser', 'os', 'country'] as const
export type Dimension = (typeof DIMENSIONS)[number]

/** Distinct User-Agents remembered across flushes, and addresses within one. */
const MEMO_ENTRIES = 10_000

export class Breakdowns {
  readonly #agents = new Memo<AgentFamilies>(MEMO_ENTRIES)
  #countries = new Memo<string>(MEMO_ENTRIES)

  constructor(readonly countryOf: CountryOf) {}

  /** One link-day's counts by dimension and value. */
  of(agents: ReadonlyMap<string, number>, addresses: ReadonlyMap<string, number>): Map<Dimension, Map<string, number>> {
    const out = new Map<Dimension, Map<string, number>>(DIMENSIONS.map((d) => [d, new Map()]))
    const add = (dim: Dimension, value: string, n: number) => {
      const counts = out.get(dim)!
      counts.set(value, (counts.get(value) ?? 0) + n)
    }
    for (const [agent, n] of agents) {
      const f = this.#agents.get(agent, agentFamilies)
      add('device', f.device, n)
      add('browser', f.browser, n)
      add('os', f.os, n)
    }
    for (const [address, n] of addresses) add('country', this.#countries.get(address, this.countryOf), n)
    return out
  }

  /** At the end of a flush: no address is kept past the flush that counted it. */
  forgetAddresses(): void {
    this.#countries = new Memo<string>(MEMO_ENTRIES)
  }
}
