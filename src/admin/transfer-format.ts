// The export stream: JSON Lines. A header, then one line per row of the tables below in
// this order (a row's references come before it), then a trailer with each table's row count, so a
// truncated stream is refused on import, and the SHA-256 of every line before it, so an edited one
// is. Which tables move, and why: docs/decisions.md, "Export".
import type { Sql, Tx } from '../db/types.js'

export const FORMAT = 'link-service-export'
export const VERSION = 1

export interface Table {
  name: string
  /** the primary key: rows are written in its order, so two exports of equal data are equal */
  key: string[]
  /** only with `export --sessions` (and always with `migrate`) */
  sessions?: true
  /** a later migration's table: exported when this database has it */
  optional?: true
}

export const TABLES: readonly Table[] = [
  { name: 'users', key: ['id'] },
  { name: 'sessions', key: ['token_hash'], sessions: true },
  // Tombstones included: a deleted code stays unusable (contract §4).
  { name: 'links', key: ['code'] },
  // What the visit caps (max_visits) have left: without it, an imported cap would start full.
  { name: 'link_caps', key: ['code'], optional: true },
  // Experiments: the secret with them, so that visitors keep their variants and click ids already
  // out still verify; the ids that converted, so that a replay still counts once.
  { name: 'experiment_secret', key: ['one'], optional: true },
  { name: 'link_experiments', key: ['code'], optional: true },
  { name: 'experiment_days', key: ['code', 'day', 'variant'], optional: true },
  { name: 'conversions_seen', key: ['id'], optional: true },
  { name: 'visit_days', key: ['code', 'day'] },
  { name: 'visit_referrers', key: ['code', 'day', 'host'] },
  { name: 'visit_dims', key: ['code', 'day', 'dim', 'value'], optional: true },
  // Manual entries and threat-feed entries alike, with the feeds' state (a refresh resumes from it).
  { name: 'blocked_hosts', key: ['host', 'source'], optional: true },
  { name: 'blocklist_sources', key: ['name'], optional: true },
  { name: 'reports', key: ['id'], optional: true },
  // Endpoints with their secrets (the export is a backup, and holds password hashes already);
  // their deliveries stay behind: history, and what is pending would be sent from the old host too.
  { name: 'webhooks', key: ['id'], optional: true },
]

export interface Header {
  format: typeof FORMAT
  version: typeof VERSION
  /** the latest migration applied to the exported database: an import needs the same */
  schema: number
  exported_at: string
}

/** The last line: rows written per table, and the digest of the lines before it (each with its newline). */
export interface Trailer {
  counts: Record<string, number>
  /** hex */
  sha256: string
}

/**
 * The longest line an import reads. The longest valid row is a link's: a 4,096-byte url, its
 * Location form (up to three times as long) and host_domains, every suffix of its host, about
 * 4 MiB for a 4,096-byte host of one-letter labels. A longer line is refused before it is held.
 */
export const MAX_LINE_BYTES = 8 * 1024 * 1024

/** Bad input or a database that cannot take it: a one-line reason, nothing written. */
export class TransferError extends Error {}

export async function schemaVersion(sql: Sql | Tx): Promise<number> {
  const [row]: [{ version: number }?] = await sql`select coalesce(max(version), 0)::int as version from schema_migrations`
  return row!.version
}

/** The tables of TABLES that this database has (an optional one may be missing). */
export async function presentTables(sql: Sql | Tx): Promise<Table[]> {
  const names = TABLES.map((t) => t.name)
  const rows: { name: string }[] = await sql`select name from unnest(${names}::text[]) as name where to_regclass(name) is not null`
  const present = new Set(rows.map((r) => r.name))
  return TABLES.filter((t) => present.has(t.name))
}
