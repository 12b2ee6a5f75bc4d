// A unit of work that is all or nothing, inside a transaction already open (a savepoint) or in one
// of its own: an effect may run on its own or inside the transaction of an Idempotency-Key.
import type { Sql, Tx } from './types.js'

export const atomically = <T>(sql: Sql | Tx, work: (tx: Tx) => Promise<T>): Promise<T> =>
  ('savepoint' in sql ? sql.savepoint(work) : sql.begin(work)) as Promise<T>
