// Writes the export stream (transfer-format.ts) of one database, read in one snapshot, row by row
// through cursors so that a million links never sit in memory at once.
import { createHash } from 'node:crypto'
import type { Sql, Tx } from '../db/types.js'
import { FORMAT, presentTables, schemaVersion, VERSION, type Header, type Table, type Trailer } from './transfer-format.js'

const CURSOR_ROWS = 1_000

export interface ExportOptions {
  /** include sessions (their token digests): logged-in users stay logged in */
  sessions: boolean
}

/** The export transaction's settings. */
export async function exportSession(tx: Tx): Promise<void> {
  // PostgreSQL renders each value (row_to_json): timestamps with their microseconds, bigints
  // whole, bytea as hex. In UTC, so that equal data gives equal bytes on any server.
  await tx`set local time zone 'UTC'`
  // The snapshot waits on a slow reader of the output; the service's own bound is for requests.
  await tx`set local idle_in_transaction_session_timeout = 0`
  // Rows stream in key order from each table's primary-key index. For a whole big table the
  // planner would rather sort, and a sort writes the table to temp files before its first row:
  // at 10M links, one statistics table of 145 million rows wrote 15 GB in three minutes, unfinished.
  await tx`set local enable_sort = off`
}

/** Statistics tables: a deleted link's rows wait there for the daily job (visit_stats_orphans). */
const STATISTICS = new Set(['visit_days', 'visit_referrers', 'visit_dims'])

/** A table's rows as JSON, in key order (the import checks it). A deleted link's statistics still
 *  waiting to be deleted are left out: they are as good as gone, and an import would keep them. */
export function tableRows(tx: Tx, table: Table) {
  if (STATISTICS.has(table.name)) {
    return tx<{ row: string }[]>`select row_to_json(t)::text as row from ${tx(table.name)} t
      where not exists (select from visit_stats_orphans o where o.code = t.code) order by ${tx(table.key)}`
  }
  return tx<{ row: string }[]>`select row_to_json(t)::text as row from ${tx(table.name)} t order by ${tx(table.key)}`
}

/** Hands each line (without its newline) to `line`, awaiting it; returns the rows per table. */
export async function exportDatabase(
  sql: Sql,
  options: ExportOptions,
  line: (text: string) => Promise<void>,
): Promise<Record<string, number>> {
  // One repeatable-read transaction: every table as of one moment, while the service writes on.
  return sql.begin('isolation level repeatable read read only', async (tx) => {
    await exportSession(tx)
    const digest = createHash('sha256')
    const write = (text: string) => {
      digest.update(text + '\n')
      return line(text)
    }
    const header: Header = { format: FORMAT, version: VERSION, schema: await schemaVersion(tx), exported_at: new Date().toISOString() }
    await write(JSON.stringify(header))
    const counts: Record<string, number> = {}
    for (const table of await presentTables(tx)) {
      if (table.sessions && !options.sessions) continue
      const prefix = `{"table":${JSON.stringify(table.name)},"row":`
      let n = 0
      for await (const batch of tableRows(tx, table).cursor(CURSOR_ROWS)) {
        for (const { row } of batch) await write(prefix + row + '}')
        n += batch.length
      }
      counts[table.name] = n
    }
    const trailer: Trailer = { counts, sha256: digest.digest('hex') }
    await line(JSON.stringify(trailer))
    return counts
  })
}
