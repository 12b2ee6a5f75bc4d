// Client addresses whose password checks failed lately (a wrong password, an unknown username) or
// were refused (503: the address sent more than the line could take). Their next checks wait
// behind everyone else's (fair-queue.ts, TwoLaneQueue), so addresses that guess cannot make a
// bystander wait. Per process, bounded: past MAX_CLIENTS the address whose
// last failure is oldest is forgotten first.

/** How long a failure counts. */
export const FAILURE_MEMORY_MS = 10 * 60_000
const MAX_CLIENTS = 65_536

export class FailingClients {
  /** by address: the time of its last failure, oldest first */
  readonly #lastFailure = new Map<string, number>()

  constructor(private readonly now: () => number = () => performance.now()) {}

  note(client: string): void {
    this.#lastFailure.delete(client)
    this.#lastFailure.set(client, this.now())
    if (this.#lastFailure.size > MAX_CLIENTS) this.#lastFailure.delete(this.#lastFailure.keys().next().value!)
  }

  has(client: string): boolean {
    const at = this.#lastFailure.get(client)
    if (at === undefined) return false
    if (this.now() - at <= FAILURE_MEMORY_MS) return true
    this.#lastFailure.delete(client)
    return false
  }
}
