// The `postgres` client's types as this service uses them, and what opening a database gives.
import type postgres from 'postgres'

export type Sql = postgres.Sql<Record<string, never>>
export type Tx = postgres.TransactionSql<Record<string, never>>

export interface Database {
  sql: Sql
  /** true for the embedded PGlite default: one process, one connection */
  embedded: boolean
  /** the PostgreSQL URL, when there is a real server (for LISTEN and other nodes) */
  url: string | undefined
  /** connections the pool may open */
  poolMax: number
  /** statements sent since start (each is a round trip, or rides one: a metric, and tests count them) */
  statements(): number
  close(timeoutSeconds?: number): Promise<void>
}
