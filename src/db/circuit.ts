// Failing fast while the database does not answer at all: after a few consecutive requests that
// could not reach it (no connection, or no answer within DB_TIMEOUT_MS), the circuit opens and
// requests that need the database answer 503 at once instead of each holding a client for the
// whole budget. After OPEN_MS one request is let through as a probe: its success closes the
// circuit, its failure opens it again. A probe that says neither within `probeMs` (its request
// ended without asking the database, e.g. refused for a bad header after it was let in, or its
// read hangs) is taken as failed, so the circuit cannot stay open for good on a lost probe.
import { isConnectionError } from './errors.js'

const FAILURES_TO_OPEN = 3
const OPEN_MS = 1_000

export class Circuit {
  #failures = 0
  #openUntil = 0
  #probing = false
  #probeSince = 0

  constructor(
    readonly now: () => number = () => performance.now(),
    /** how long a probe may go without an outcome before another is let through (DB_TIMEOUT_MS) */
    readonly probeMs = 10_000,
  ) {}

  /** True when the database may be asked now: closed, or this caller is the probe. */
  allows(): boolean {
    if (this.#failures < FAILURES_TO_OPEN) return true
    const now = this.now()
    if (this.#probing && now - this.#probeSince > this.probeMs) this.failed()
    if (this.#probing || now < this.#openUntil) return false
    this.#probing = true
    this.#probeSince = now
    return true
  }

  /** The database answered (whatever it said). */
  succeeded(): void {
    this.#failures = 0
    this.#probing = false
  }

  /** The database could not be reached, or did not answer in time. */
  failed(): void {
    this.#probing = false
    if (++this.#failures >= FAILURES_TO_OPEN) this.#openUntil = this.now() + OPEN_MS
  }

  /** Tells the circuit how a wait on the database ended: an error that is not about reaching it is an answer. */
  settled(err?: unknown): void {
    if (err === undefined || !isUnreachable(err)) this.succeeded()
    else this.failed()
  }
}

/** The database could not be reached (a connection error, not a statement the server refused: a full disk still answers). */
const isUnreachable = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && isConnectionError(err) && (code.length !== 5 || code.startsWith('08') || code === '57P03')
}
