// Reads that tolerate replication lag (DATABASE_READ_URL): a link's statistics, and the location
// look-up of a redirect cache miss. Each goes to the next replica that answers and is not too far
// behind; a replica that fails is skipped until its check answers again, and with none left the
// read goes to the primary. What a replica does not know (a link created a moment ago) is asked
// of the primary: lag may delay a change, never turn a new link into a 404.
//
// A replica's answer must not be cached stale for long: a replica is used only while its lag is
// below MAX_LAG_MS, and a code changed (by the change feed's word) less than RECENT_MS ago is
// read on the primary, so that every replica in use has replayed that change.
import postgres from 'postgres'
import type { Sql } from './types.js'
import { isConnectionError } from './errors.js'

const CHECK_MS = 1_000
/** A replica further behind than this is skipped until it catches up. */
const MAX_LAG_MS = 30_000
/** Codes changed this recently are read on the primary: any replica in use has replayed them by then. */
const RECENT_MS = MAX_LAG_MS + 2 * CHECK_MS
/** A replica read not answered within this is sent to the primary, and the replica skipped. */
const REPLICA_WAIT_MS = 2_000
const POOL_MAX = 10

export interface ReadPoolStats {
  /** "primary", or "replica1", "replica2"... in DATABASE_READ_URL's order (never the URL: it may hold a password) */
  name: string
  up: boolean
  /** seconds behind the primary at the last check (0 for the primary) */
  lagSeconds: number
  reads: number
  failures: number
}

interface Replica extends ReadPoolStats {
  sql: Sql
}

export class ReadPools {
  readonly #replicas: Replica[]
  readonly #primary: ReadPoolStats = { name: 'primary', up: true, lagSeconds: 0, reads: 0, failures: 0 }
  #next = 0
  readonly #recent = new Map<string, number>()
  #allRecentUntil = 0
  readonly #timer: NodeJS.Timeout | undefined

  constructor(
    readonly primary: Sql,
    urls: readonly string[],
    options: { prepare: boolean; connectTimeoutSeconds: number } = { prepare: true, connectTimeoutSeconds: 2 },
  ) {
    this.#replicas = urls.map((url, i) => ({
      name: `replica${i + 1}`,
      // Up after its first check: a replica that is down at start is never asked.
      up: false,
      lagSeconds: 0,
      reads: 0,
      failures: 0,
      sql: postgres(url, {
        max: POOL_MAX,
        prepare: options.prepare,
        idle_timeout: 60,
        connect_timeout: options.connectTimeoutSeconds,
        onnotice: () => {},
        connection: { application_name: 'link-service-reads' },
      }) as unknown as Sql,
    }))
    if (this.#replicas.length > 0) {
      void this.#checkAll()
      this.#timer = setInterval(() => void this.#checkAll(), CHECK_MS).unref()
    }
  }

  /** Resolves once every replica has been checked once (start-up, and tests). */
  ready(): Promise<void> {
    return this.#checkAll()
  }

  /** A link changed (the change feed said so, or this node wrote it): read it on the primary for a while. */
  changed(code: string): void {
    if (this.#replicas.length === 0) return
    const now = performance.now()
    this.#recent.set(code, now + RECENT_MS)
    // The map is trimmed as it grows: entries are added in time order, so the oldest come first.
    if (this.#recent.size > 10_000) {
      for (const [c, until] of this.#recent) {
        if (until > now) break
        this.#recent.delete(c)
      }
    }
  }

  /** Every link may have changed (a block-list change): everything is read on the primary for a while. */
  changedAll(): void {
    this.#allRecentUntil = performance.now() + RECENT_MS
  }

  /** May a replica answer for this code now? */
  replicaMay(code: string): boolean {
    const now = performance.now()
    if (now < this.#allRecentUntil) return false
    const until = this.#recent.get(code)
    if (until === undefined) return true
    if (until > now) return false
    this.#recent.delete(code)
    return true
  }

  /**
   * Runs `read` on a replica, or on the primary when none may be used. A read the replica fails
   * is sent to the primary (a replica that cannot be reached or does not answer in time is also
   * skipped until its check answers); so is a result `incomplete` says it may not know yet.
   */
  async read<T>(read: (sql: Sql) => Promise<T>, incomplete: (result: T) => boolean = () => false): Promise<T> {
    const replica = this.#pick()
    if (replica !== undefined) {
      const outcome = await within(read(replica.sql), REPLICA_WAIT_MS).then(
        (result) => ({ result }),
        (err: unknown) => ({ err }),
      )
      if ('result' in outcome) {
        replica.reads++
        if (!incomplete(outcome.result)) return outcome.result
      } else {
        // Any failure sends the read to the primary (a replica may not have replayed a migration
        // yet); one that says the replica cannot be reached, or is too slow, also skips it.
        replica.failures++
        if (isConnectionError(outcome.err) || outcome.err instanceof LateRead) replica.up = false
      }
    }
    return this.onPrimary(read)
  }

  /** A lag-tolerant read that goes to the primary all the same (counted as the primary's). */
  onPrimary<T>(read: (sql: Sql) => Promise<T>): Promise<T> {
    this.#primary.reads++
    return read(this.primary)
  }

  /** Whether any replica is configured (else `read` is the primary's, at no extra cost). */
  get replicated(): boolean {
    return this.#replicas.length > 0
  }

  stats(): ReadPoolStats[] {
    return [this.#primary, ...this.#replicas].map(({ name, up, lagSeconds, reads, failures }) => ({ name, up, lagSeconds, reads, failures }))
  }

  async close(timeoutSeconds = 1): Promise<void> {
    clearInterval(this.#timer)
    await Promise.all(this.#replicas.map((r) => r.sql.end({ timeout: timeoutSeconds })))
  }

  #pick(): Replica | undefined {
    for (let i = 0; i < this.#replicas.length; i++) {
      const replica = this.#replicas[(this.#next + i) % this.#replicas.length]!
      if (replica.up) {
        this.#next = (this.#next + i + 1) % this.#replicas.length
        return replica
      }
    }
    return undefined
  }

  #checking: Promise<void> | undefined
  #checkAll(): Promise<void> {
    this.#checking ??= Promise.all(this.#replicas.map((r) => this.#check(r))).then(() => void (this.#checking = undefined))
    return this.#checking
  }

  /** Up when it answers within the wait, streams from its primary and is less than MAX_LAG_MS behind. */
  async #check(replica: Replica): Promise<void> {
    const lag = await within(
      replica.sql<Array<{ lag: number | null }>>`
        select case
          when not pg_is_in_recovery() then 0
          -- No WAL receiver: cut off from its primary (a failover, say), its lag cannot be known.
          when not exists (select from pg_stat_wal_receiver) then null
          when pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() then 0
          else coalesce(extract(epoch from now() - pg_last_xact_replay_timestamp()), 0) end::float8 as lag`,
      REPLICA_WAIT_MS,
    ).then(([row]) => row!.lag ?? undefined, () => undefined)
    if (lag === undefined) replica.up = false
    else {
      replica.lagSeconds = lag
      replica.up = lag * 1000 < MAX_LAG_MS
    }
  }
}

class LateRead extends Error {}

/** `work`, or a LateRead rejection once `ms` have passed (the work carries on unobserved). */
async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new LateRead(`no answer within ${ms} ms`)), ms)))])
  } finally {
    clearTimeout(timer)
  }
}
