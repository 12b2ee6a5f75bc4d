// Start-time fair queueing (Goyal et al., SIGCOMM 1996) over client addresses, with accounts as a
// second key. Each waiting item has a start tag; serving takes the smallest, and the virtual time
// is the start tag of the item served last. A client address that is not ahead of its fair share
// starts at the virtual time: a newcomer goes next. One that is ahead starts after its own
// previous item and after the previous item for the same account. So a flood from one address
// only lengthens its own line, and so does a flood aimed at one account from many addresses
// (past the first item of each), while the account's owner, asking from an address of its own,
// still goes next. Among equal start tags, the client with fewest items waiting goes first (one
// that sends faster than it is served is flooding), then the account with fewer items before,
// then first come. LaneQueue puts clients that passed a check lately ahead of the others, and those
// whose checks failed lately behind them.

export interface Queued<T> {
  readonly value: T
  readonly client: string | undefined
  readonly start: number
  /** the account's finish tag before this item: breaks ties between equal start tags */
  readonly rank: number
}

export interface Keys {
  /** the client address (or IPv6 /64) */
  client?: string
  /** the account the request concerns */
  account?: string
}

export class FairQueue<T> {
  #virtual = 0
  /** per key: the finish tag of its newest item; a tag at or below #virtual counts as none */
  readonly #finish = new Map<string, number>()
  /** sorted by start tag, then rank, then first come */
  readonly #items: Queued<T>[] = []
  /** per client key: its items waiting */
  readonly #waiting = new Map<string, number>()

  get size(): number {
    return this.#items.length
  }

  /** Queues a value; `ahead` is how many items will be served before it. */
  push(keys: Keys, value: T): { item: Queued<T>; ahead: number } {
    const client = keys.client === undefined ? undefined : `client ${keys.client}`
    const account = keys.account === undefined ? undefined : `account ${keys.account}`
    const clientFinish = this.#tag(client)
    const rank = this.#tag(account)
    const start = clientFinish > this.#virtual ? Math.max(clientFinish, rank) : this.#virtual
    if (client !== undefined) this.#finish.set(client, start + 1)
    if (account !== undefined) this.#finish.set(account, Math.max(rank, start + 1))
    const item: Queued<T> = { value, client, start, rank }
    if (client !== undefined) this.#waiting.set(client, (this.#waiting.get(client) ?? 0) + 1)
    // Binary search for the first item that sorts after this one.
    let lo = 0
    let hi = this.#items.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      const other = this.#items[mid]!
      if (other.start < start || (other.start === start && other.rank <= rank)) lo = mid + 1
      else hi = mid
    }
    this.#items.splice(lo, 0, item)
    // Of those sorted before it, an item of the same start tag whose client has more waiting
    // will be served after it (shift).
    const mine = this.#waitingOf(item)
    let ahead = 0
    for (let i = 0; i < lo; i++) if (this.#items[i]!.start < start || this.#waitingOf(this.#items[i]!) <= mine) ahead++
    return { item, ahead }
  }

  /** The next item to serve, removed from the queue. */
  shift(): T | undefined {
    const items = this.#items
    if (items.length === 0) return undefined
    // Among the items of the earliest start tag (in order of rank, then arrival), the first of
    // the client with fewest waiting.
    let best = 0
    for (let i = 1; i < items.length && items[i]!.start === items[0]!.start; i++) {
      if (this.#waitingOf(items[i]!) < this.#waitingOf(items[best]!)) best = i
    }
    const [item] = items.splice(best, 1) as [Queued<T>]
    this.#left(item)
    this.#virtual = item.start
    this.#forget()
    return item.value
  }

  /** The item that would be served last: the newest of the most served keys. */
  last(): Queued<T> | undefined {
    return this.#items.at(-1)
  }

  /** Takes an item out before its turn (its client left, or it waited too long). */
  remove(item: Queued<T>): boolean {
    const i = this.#items.indexOf(item)
    if (i === -1) return false
    this.#items.splice(i, 1)
    this.#left(item)
    this.#forget()
    return true
  }

  #waitingOf(item: Queued<T>): number {
    return item.client === undefined ? 0 : this.#waiting.get(item.client)!
  }

  #left(item: Queued<T>): void {
    if (item.client === undefined) return
    const n = this.#waiting.get(item.client)! - 1
    if (n === 0) this.#waiting.delete(item.client)
    else this.#waiting.set(item.client, n)
  }

  #tag(key: string | undefined): number {
    return key === undefined ? 0 : (this.#finish.get(key) ?? 0)
  }

  /** Tags the virtual time has reached are the same as none; with nothing waiting, no history
   *  matters (a busy period ends), so a flood's tags do not outlive it. */
  #forget(): void {
    if (this.#items.length === 0) {
      this.#finish.clear()
      return
    }
    if (this.#finish.size <= 2 * this.#items.length + 64) return
    for (const [key, finish] of this.#finish) if (finish <= this.#virtual) this.#finish.delete(key)
  }
}

/** Where a client's checks wait: ahead of the others, with them, or behind them. */
export type Standing = 'trusted' | 'new' | 'failing'
const LANE: Record<Standing, 0 | 1 | 2> = { trusted: 0, new: 1, failing: 2 }

/**
 * Three fair queues, each served only while those before it are empty: clients that passed a
 * check lately (`trusted`), then clients never seen or not lately (`new`), then clients whose checks
 * failed lately (`failing`: guessing) or that ask for a check while one of their checks is still
 * waiting (sending faster than they are served: a flood), which take fair turns with the others
 * like them. `demote` moves a client's waiting checks to the last lane when one of its checks
 * fails. Items are named by their values.
 */
export class LaneQueue<T> {
  readonly #lanes = [new FairQueue<T>(), new FairQueue<T>(), new FairQueue<T>()] as const
  readonly #where = new Map<T, { lane: 0 | 1 | 2; item: Queued<T>; keys: Keys }>()
  /** per client: its checks waiting, in any lane */
  readonly #waiting = new Map<string, number>()

  get size(): number {
    return this.#where.size
  }

  /** `ahead`: how many would be served before it if nobody else came. */
  push(keys: Keys, value: T, standing: Standing): number {
    if (standing !== 'failing' && keys.client !== undefined && this.#waiting.has(keys.client)) {
      this.demote(keys.client)
      standing = 'failing'
    }
    const lane = LANE[standing]
    this.#count(keys, 1)
    const { item, ahead } = this.#lanes[lane].push(keys, value)
    this.#where.set(value, { lane, item, keys })
    let before = ahead
    for (let l = 0; l < lane; l++) before += this.#lanes[l]!.size
    return before
  }

  shift(): T | undefined {
    const lane = this.#lanes.find((q) => q.size > 0)
    const value = lane?.shift()
    if (value === undefined) return undefined
    this.#left(value)
    return value
  }

  /** The value that would be served last. */
  last(): T | undefined {
    return (this.#lanes[2].last() ?? this.#lanes[1].last() ?? this.#lanes[0].last())?.value
  }

  remove(value: T): boolean {
    const at = this.#where.get(value)
    if (at === undefined) return false
    this.#left(value)
    return this.#lanes[at.lane].remove(at.item)
  }

  /** The client's checks waiting in the first two lanes go to the last, in their order. */
  demote(client: string): void {
    for (const [value, at] of this.#where) {
      if (at.lane === 2 || at.keys.client !== client) continue
      this.#lanes[at.lane].remove(at.item)
      this.#where.set(value, { lane: 2, item: this.#lanes[2].push(at.keys, value).item, keys: at.keys })
    }
  }

  #left(value: T): void {
    const at = this.#where.get(value)!
    this.#where.delete(value)
    this.#count(at.keys, -1)
  }

  #count(keys: Keys, by: 1 | -1): void {
    if (keys.client === undefined) return
    const n = (this.#waiting.get(keys.client) ?? 0) + by
    if (n === 0) this.#waiting.delete(keys.client)
    else this.#waiting.set(keys.client, n)
  }
}
