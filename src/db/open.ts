// Opens the one `postgres` client: a real PostgreSQL at DATABASE_URL, or the embedded PGlite
// (embedded.ts) when it is unset.
import { openEmbedded } from './embedded.js'
import { openPool } from './pool.js'
import type { Database } from './types.js'

const POOL_MAX = 10

const common = {
  onnotice: () => {},
  // The name an operator sees in pg_stat_activity.
  connection: { application_name: 'link-service' },
} as const

/**
 * `timeoutMs` bounds what a request waits for (DB_TIMEOUT_MS). On a real server it also bounds a
 * transaction left idle: when a connection is cut mid-transaction, the driver can lose track of
 * a transaction on another connection, which then holds its row locks (a user's, for every
 * create) until the server ends it. idle_in_transaction_session_timeout makes the server do so.
 * Our transactions send their statements back to back, so a live one is never idle that long.
 */
export async function openDatabase(
  databaseUrl: string | undefined,
  dataDir: string,
  timeoutMs = 5_000,
  onPoolReplaced: () => void = () => {},
  /** DATABASE_PREPARE: off behind a pooler in transaction mode that keeps no prepared statements (docs/scale.md) */
  prepare = true,
  /** a pool of another size, under another name in pg_stat_activity (the webhook thread's) */
  role: { max: number; name: string } = { max: POOL_MAX, name: common.connection.application_name },
): Promise<Database> {
  let statements = 0
  const count = { debug: () => void statements++ }
  if (databaseUrl !== undefined) {
    const pool = openPool(databaseUrl, {
      ...common,
      ...count,
      connection: { application_name: role.name, idle_in_transaction_session_timeout: timeoutMs },
      max: role.max,
      prepare,
      idle_timeout: 60,
      // A refused or silent server fails the waiting queries instead of queueing them for long.
      connect_timeout: Math.max(1, Math.ceil(timeoutMs / 1000)),
    }, onPoolReplaced)
    return {
      sql: pool.sql,
      embedded: false,
      url: databaseUrl,
      poolMax: role.max,
      statements: () => statements,
      close: (timeout = 5) => pool.close(timeout),
    }
  }
  return openEmbedded(dataDir, { ...common, ...count }, () => statements)
}
