// The block list's feed entries in the database: a source's entries replaced by a new list in one
// transaction, and each source's state (the blocklist_sources table).
import type { Sql } from '../db/types.js'
import { FLUSH_ALL, LINK_CHANNEL } from '../db/channels.js'
import type { Validators } from './read-source.js'

/**
 * Hosts sent per statement while a list is loaded: big enough for few round trips (100 for a
 * million), small enough that serialising one batch, on the event loop, takes a millisecond or two.
 */
const BATCH = 10_000

export interface SourceRow {
  name: string
  location: string
  etag: string | null
  last_modified: string | null
  checked_at: Date | null
  loaded_at: Date | null
  entries: number
  invalid_lines: number
  last_error: string | null
  failures: number
}

export function listSources(sql: Sql): Promise<SourceRow[]> {
  return sql<SourceRow[]>`select * from blocklist_sources order by name`
}

export async function findSource(sql: Sql, name: string): Promise<SourceRow | undefined> {
  const [row] = await sql<SourceRow[]>`select * from blocklist_sources where name = ${name}`
  return row
}

export interface LoadResult {
  entries: number
  added: number
  removed: number
}

/**
 * Makes `hosts` the source's entries: the new list is staged in a temporary table, then only the
 * difference is written (hosts gone deleted, hosts new inserted), so an unchanged feed writes
 * nothing. When anything changed every node is told to forget its cached redirects (at commit):
 * links to a newly listed host answer 410 from then on, without looking for them.
 */
export async function loadSource(
  sql: Sql,
  source: { name: string; location: string; validators: Validators; invalid: number; checkedAt?: Date },
  hosts: Iterable<string>,
): Promise<LoadResult> {
  return sql.begin(async (tx) => {
    await tx`create temporary table feed_incoming (host text not null) on commit drop`
    // A batch at a time, never the whole list copied into one array (a pause of its own).
    let batch: string[] = []
    for (const host of hosts) {
      batch.push(host)
      if (batch.length < BATCH) continue
      await tx`insert into feed_incoming (host) select unnest(${batch}::text[])`
      batch = []
    }
    if (batch.length > 0) await tx`insert into feed_incoming (host) select unnest(${batch}::text[])`
    await tx`analyze feed_incoming`
    const removed = await tx`
      delete from blocked_hosts b where b.source = ${source.name}
        and not exists (select 1 from feed_incoming i where i.host = b.host)`
    const added = await tx`
      insert into blocked_hosts (host, source)
      select distinct i.host, ${source.name}::text from feed_incoming i
      where not exists (select 1 from blocked_hosts b where b.host = i.host and b.source = ${source.name})
      on conflict (host, source) do nothing`
    const [count] = await tx<{ entries: number }[]>`select count(*)::int as entries from blocked_hosts where source = ${source.name}`
    const entries = count!.entries
    await tx`
      insert into blocklist_sources as s (name, location, etag, last_modified, checked_at, loaded_at, entries, invalid_lines, last_error, failures)
      values (${source.name}, ${source.location}, ${source.validators.etag}, ${source.validators.lastModified},
              coalesce(${source.checkedAt ?? null}::timestamptz, now()), now(), ${entries}, ${source.invalid}, null, 0)
      on conflict (name) do update set location = excluded.location, etag = excluded.etag, last_modified = excluded.last_modified,
        checked_at = excluded.checked_at, loaded_at = excluded.loaded_at, entries = excluded.entries,
        invalid_lines = excluded.invalid_lines, last_error = null, failures = 0`
    if (added.count + removed.count > 0) {
      // Fresh statistics before anyone reads with them: planned on the figures of an empty list,
      // the look-up of a link's domains scans the table instead of probing its index.
      await tx`analyze blocked_hosts`
      await tx`select pg_notify(${LINK_CHANNEL}, ${FLUSH_ALL})`
    }
    return { entries, added: added.count, removed: removed.count }
  })
}

// A source's checked_at is when its check began (`at`, from dueAt), not when it ended: a round
// slowed by a busy machine must not make the same node's next turn look too soon, and skip it.
// Without `at` (an operator's import), the time of the write.

/** A conditional read said the feed is as it was. */
export async function markUnchanged(sql: Sql, name: string, at?: Date): Promise<void> {
  await sql`update blocklist_sources set checked_at = coalesce(${at ?? null}::timestamptz, now()), last_error = null, failures = 0 where name = ${name}`
}

/** A read or load failed: the entries stay as they were. */
export async function markFailed(sql: Sql, name: string, location: string, error: string, at?: Date): Promise<void> {
  await sql`
    insert into blocklist_sources as s (name, location, checked_at, last_error, failures)
    values (${name}, ${location}, coalesce(${at ?? null}::timestamptz, now()), ${error}, 1)
    on conflict (name) do update set checked_at = excluded.checked_at, last_error = excluded.last_error, failures = s.failures + 1`
}

/**
 * When the source was last checked at least `seconds` ago (or never), by the database clock: the
 * database's time now, to be recorded as the check's; undefined when it is not due.
 */
export async function dueAt(sql: Sql, name: string, seconds: number): Promise<Date | undefined> {
  const [row] = await sql<{ now: Date; due: boolean }[]>`
    select now() as now, coalesce((select checked_at is null or checked_at <= now() - make_interval(secs => ${seconds}::float8)
                                   from blocklist_sources where name = ${name}), true) as due`
  return row!.due ? row!.now : undefined
}

/** Drops a source and its entries (an operator's `block remove --source`). False when unknown. */
export async function removeSource(sql: Sql, name: string): Promise<{ removed: boolean; entries: number }> {
  return sql.begin(async (tx) => {
    const gone = await tx`delete from blocked_hosts where source = ${name}`
    const row = await tx`delete from blocklist_sources where name = ${name}`
    if (gone.count > 0) await tx`select pg_notify(${LINK_CHANNEL}, ${FLUSH_ALL})`
    return { removed: row.count > 0 || gone.count > 0, entries: gone.count }
  })
}
