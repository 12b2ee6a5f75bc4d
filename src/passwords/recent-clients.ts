// Client addresses by what their password checks did lately, for the KDF's line (fair-queue.ts,
// LaneQueue): those whose checks failed (a wrong password, an unknown username) or were refused
// (503: the address sent more than the line could take) wait behind everyone else's, so addresses
// that guess cannot make a bystander wait; those that passed a check lately go ahead of addresses
// never seen, so a flood from fresh addresses cannot make a returning user wait either. Per
// process, bounded: past MAX_CLIENTS the address noted longest ago is forgotten first.

/** How long a failure counts. */
export const FAILURE_MEMORY_MS = 10 * 60_000
/** How long a success counts: a user who signs in from home or work every few weeks. */
export const SUCCESS_MEMORY_MS = 30 * 24 * 60 * 60_000
const MAX_CLIENTS = 65_536

export class RecentClients {
  /** by address: when it was last noted, oldest first */
  readonly #lastNoted = new Map<string, number>()

  constructor(
    private readonly memoryMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  note(client: string): void {
    this.#lastNoted.delete(client)
    this.#lastNoted.set(client, this.now())
    if (this.#lastNoted.size > MAX_CLIENTS) this.#lastNoted.delete(this.#lastNoted.keys().next().value!)
  }

  has(client: string): boolean {
    const at = this.#lastNoted.get(client)
    if (at === undefined) return false
    if (this.now() - at <= this.memoryMs) return true
    this.#lastNoted.delete(client)
    return false
  }

  forget(client: string): void {
    this.#lastNoted.delete(client)
  }
}
