// A least-recently-used memo for the flush's lookups (User-Agent → families, address → country):
// a Map keeps insertion order, so a hit moves its key to the end and the oldest key is first.
export class Memo<V> {
  readonly #entries = new Map<string, V>()

  constructor(readonly max: number) {}

  /** The value of `key`, worked out by `make` when not remembered. */
  get(key: string, make: (key: string) => V): V {
    const hit = this.#entries.get(key)
    if (hit !== undefined) {
      this.#entries.delete(key)
      this.#entries.set(key, hit)
      return hit
    }
    const value = make(key)
    if (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value!)
    this.#entries.set(key, value)
    return value
  }

  get size(): number {
    return this.#entries.size
  }
}
