// The connection pool to a real PostgreSQL, kept alive even when the driver wedges. Under
// connection resets the `postgres` driver (3.4.9, patched: scripts/patch-postgres.mjs) can still
// lose track of its connections: measured here, 9 of 10 left in its "ended" state with no socket
// after server-side terminations, so the pool never reconnected and every query waited forever.
// A watchdog notices a pool that stops answering while a fresh connection does answer, and
// swaps in a new pool. Callers hold one stable `sql` that always reaches the current pool.
import postgres from 'postgres'
import { succeedsWithin } from '../settle.js'
type Sql = postgres.Sql<Record<string, never>>

const CHECK_MS = 1_000
/** Consecutive failed checks before a fresh connection is tried. */
const FAILURES_BEFORE_PROBE = 3

export interface Pool {
  sql: Sql
  close(timeoutSeconds: number): Promise<void>
}

export function openPool(url: string, options: postgres.Options<Record<string, never>>, onReplace: () => void): Pool {
  let current = postgres(url, options) as unknown as Sql
  // A function target, so that the proxy can be called as a tag: sql`...`, sql(helper).
  const sql = new Proxy(function () {} as unknown as Sql, {
    apply: (_target, _this, args: unknown[]) => (current as unknown as (...a: unknown[]) => unknown)(...args),
    get: (_target, prop) => Reflect.get(current, prop),
  })
  let failures = 0
  let checking = false

  const answers = (client: Sql) => succeedsWithin(client`select 1`, CHECK_MS * 2)
  const waitingForStandby = async (client: Sql): Promise<boolean> => {
    let waiting = false
    const asked = client<{ n: number }[]>`select count(*)::int as n from pg_stat_activity
      where application_name = current_setting('application_name') and wait_event = 'SyncRep'`.then(([row]) => (waiting = (row?.n ?? 0) > 0))
    return (await succeedsWithin(asked, CHECK_MS * 2)) && waiting
  }

  const check = async () => {
    if (checking) return
    checking = true
    try {
      if (await answers(current)) {
        failures = 0
        return
      }
      if (++failures < FAILURES_BEFORE_PROBE) return
      // The database itself may be down: then a new pool would not help. Ask a fresh connection;
      // and whether the pool's connections are only waiting for a synchronous standby to confirm
      // their commits (wait event SyncRep): a new pool would wait the same, and the old one's
      // backends would stay, piling up with every replacement.
      const fresh = postgres(url, { ...options, max: 1 }) as unknown as Sql
      const healthy = await answers(fresh)
      const replicating = healthy && (await waitingForStandby(fresh))
      void fresh.end({ timeout: 0 }).catch(() => {})
      if (!healthy || replicating) return
      const old = current
      current = postgres(url, options) as unknown as Sql
      failures = 0
      onReplace()
      void old.end({ timeout: 1 }).catch(() => {})
    } finally {
      checking = false
    }
  }
  const timer = setInterval(() => void check(), CHECK_MS).unref()

  return {
    sql,
    async close(timeoutSeconds) {
      clearInterval(timer)
      await current.end({ timeout: timeoutSeconds })
    },
  }
}
