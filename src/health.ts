// GET /healthz: does the database read, does it take writes, is the change feed up.
// Cheap enough for a load balancer every second: one `select 1`, and a probe write only when no
// write has told us lately how writes are going. 503 when the service cannot serve writes.
import type { Sql } from './db/types.js'
import { serviceUnavailable } from './http/errors.js'
import { json, type Reply } from './http/reply.js'
import { succeedsWithin } from './time-limit.js'

const CHECK_TIMEOUT_MS = 2_000
/** A write outcome younger than this answers for the writes; older, the probe writes. */
const FRESH_MS = 5_000

/** The last thing writes told us: the app reports requests that wrote, the visit flush reports its batches. */
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
  const reads = await passes(sql`select 1`)
  let writable = reads ? writes.fresh() : false
  if (writable === undefined) {
    writable = await passes(sql`
      insert into health_probe (id, at) values (1, now()) on conflict (id) do update set at = excluded.at`)
    writes.record(writable)
  }
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
