// Start-time fair queueing (Goyal et al., SIGCOMM 1996) over several keys at once: each waiting
// item belongs to a client address and to an account. An item's start tag is the latest of the
// virtual time and the finish tags of its keys; serving takes the smallest start tag (first come
// on ties). So a key that has queued k items is served once per round while k rounds pass, and a
// newcomer with fresh keys goes next: a flood from one address, or aimed at one account from
// many addresses, only lengthens its own line.

export interface Queued<T> {
  readonly value: T
  readonly start: number
  readonly seq: number
}

export class FairQueue<T> {
  #virtual = 0
  #seq = 0
  /** per key: the finish tag of its newest item; a tag at or below #virtual counts as none */
  readonly #finish = new Map<string, number>()
  /** sorted by (start, seq) */
  readonly #items: Queued<T>[] = []

  get size(): number {
    return this.#items.length
  }

  /** Queues a value under its keys; `ahead` is how many items will be served before it. */
  push(keys: readonly string[], value: T): { item: Queued<T>; ahead: number } {
    let start = this.#virtual
    for (const key of keys) start = Math.max(start, this.#finish.get(key) ?? 0)
    for (const key of keys) this.#finish.set(key, start + 1)
    const item: Queued<T> = { value, start, seq: this.#seq++ }
    // Binary search for the first item that sorts after this one (a larger start tag: seq only grows).
    let lo = 0
    let hi = this.#items.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (this.#items[mid]!.start <= start) lo = mid + 1
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

  /** Keys whose finish tag the virtual time has reached are the same as absent; with nothing
   *  waiting, no history matters (a busy period ends), so a flood's tags do not outlive it. */
  #forget(): void {
    if (this.#items.length === 0) {
      this.#finish.clear()
      return
    }
    if (this.#finish.size <= 2 * this.#items.length + 64) return
    for (const [key, finish] of this.#finish) if (finish <= this.#virtual) this.#finish.delete(key)
  }
}
