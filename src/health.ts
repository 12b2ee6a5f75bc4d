// GET /healthz: does the database read, do link writes succeed, is the change feed up.
// Cheap enough for a load balancer every second: one `select 1`, and a probe write only when no
// link write has told us lately how writes are going. 503 when the service cannot write links,
// whatever else succeeds. Both checks run at once, each bounded: the answer comes within 2 s.
import type { Sql } from './db/types.js'
import { serviceUnavailable } from './http/errors.js'
import { json, type Reply } from './http/reply.js'
import { succeedsWithin } from './settle.js'

/** Each check's bound; they run side by side, so /healthz answers within this and a little. */
const CHECK_TIMEOUT_MS = 1_500
/** A write outcome younger than this answers for the writes; older, the probe writes. */
const FRESH_MS = 5_000

/** The last thing link writes told us: the app reports requests that wrote links (app.ts). */
export class WriteHealth {
  #ok = true
  #atMs = -Infinity

  record(ok: boolean): void {
    this.#ok = ok
    this.#atMs = performance.now()
  }

  /** true or false when the last outcome is fresh; undefined when a probe should ask */
  fresh(): boolean | undefined {
    return performance.now() - this.#atMs < FRESH_MS ? this.#ok : undefined
  }
}

export type FeedState = 'up' | 'down' | 'none'

export async function health(sql: Sql, writes: WriteHealth, feed: () => FeedState): Promise<Reply> {
  const known = writes.fresh()
  const [reads, probed] = await Promise.all([
    passes(sql`select 1`),
    known === undefined
      ? // Committed locally (synchronous_commit): the probe asks whether this database takes writes,
        // not whether a synchronous standby is there; the requests' own writes report that.
        passes(sql`insert into health_probe (id, at) select 1, now() from (select set_config('synchronous_commit', 'local', true)) c
                   on conflict (id) do update set at = excluded.at`)
      : undefined,
  ])
  // A probe that failed while reads fail too says nothing of writes: the database is away.
  if (probed !== undefined && (reads || probed)) writes.record(probed)
  const writable = reads && (known ?? probed ?? false)
  const changeFeed = feed()
  const body = {
    status: !reads || !writable ? 'unavailable' : changeFeed === 'down' ? 'degraded' : 'ok',
    database: reads ? 'ok' : 'failing',
    writes: writable ? 'ok' : 'failing',
    change_feed: changeFeed,
  }
  if (body.status !== 'unavailable') return json(200, body)
  // The contract's error shape, with the same three facts beside it.
  const err = serviceUnavailable(`the service cannot take writes: database ${body.database}, writes ${body.writes}`)
  return json(503, { code: err.code, message: err.message, ...body }, err.headers)
}

const passes = (work: Promise<unknown>) => succeedsWithin(work, CHECK_TIMEOUT_MS)
