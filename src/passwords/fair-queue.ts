// Start-time fair queueing (Goyal et al., SIGCOMM 1996) over client addresses, with accounts as a
// second key. Each waiting item has a start tag; serving takes the smallest, and the virtual time
// is the start tag of the item served last. A client address that is not ahead of its fair share
// starts at the virtual time: a newcomer goes next. One that is ahead starts after its own
// previous item and after the previous item for the same account. So a flood from one address
// only lengthens its own line, and so does a flood aimed at one account from many addresses
// (past the first item of each), while the account's owner, asking from an address of its own,
// still goes next. Among equal start tags, an account with fewer items before goes first, then
// first come.

export interface Queued<T> {
  readonly value: T
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
    const item: Queued<T> = { value, start, rank }
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
    return { item, ahead: lo }
  }

  /** The next item to serve, removed from the queue. */
  shift(): T | undefined {
    const item = this.#items.shift()
    if (item === undefined) return undefined
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
    this.#forget()
    return true
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
