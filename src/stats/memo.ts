// A memo for lookups worth remembering (User-Agent → families, address → country, agent → bot?),
// bounded by two generations of at most max/2 keys each: a key is looked up in the newer, then in
// the older (and moved to the newer); when the newer is full it becomes the older and the older is
// dropped. So a key used within the last max/2 new keys is always kept, and never more than max.
// Why not a Map kept in use order, deleting its first key when full: a Map's deleted entries stay
// as holes until it is rebuilt, and finding the first key walks them, which made each miss of a
// memo of 10,000 cost about 5 µs, as much as the parse it saves (all misses: a forged campaign).
export class Memo<V> {
  #newer = new Map<string, V>()
  #older = new Map<string, V>()
  readonly #half: number

  constructor(readonly max: number) {
    this.#half = Math.max(1, Math.floor(max / 2))
  }

  /** The value of `key`, worked out by `make` when not remembered. */
  get(key: string, make: (key: string) => V): V {
    const hit = this.#newer.get(key)
    if (hit !== undefined) return hit
    const value = this.#older.get(key) ?? make(key)
    if (this.#newer.size >= this.#half) {
      this.#older = this.#newer
      this.#newer = new Map()
    }
    this.#newer.set(key, value)
    return value
  }

  /** The value of `key` when remembered, without working it out. */
  peek(key: string): V | undefined {
    return this.#newer.get(key) ?? this.#older.get(key)
  }

  get size(): number {
    return this.#newer.size + this.#older.size
  }
}
