// The block list of link targets, for the admin CLI: the operator's manual entries (source
// 'manual') beside the entries of threat feeds (src/blocklist/). A change tells every node to
// forget every cached redirect (FLUSH_ALL): which codes point at a host is not worth finding out.
import type { Sql } from '../db/types.js'
import { FLUSH_ALL, LINK_CHANNEL } from '../db/channels.js'

/** The source of the entries an operator adds and removes by hand. */
export const MANUAL_SOURCE = 'manual'

export interface BlockedHostRow {
  host: string
  /** 'manual', or the feed it came from */
  source: string
  created_at: Date
  /** live links whose host is this one or a subdomain of it */
  links: number
}

/**
 * Every entry, or one source's, by host. The links are counted in one pass over the links (each
 * link's domains grouped), joined to the list: never a scan per entry.
 */
export function listBlockedHosts(sql: Sql, source?: string): Promise<BlockedHostRow[]> {
  const only = source === undefined ? sql`` : sql`where b.source = ${source}`
  return sql<BlockedHostRow[]>`
    with hits as (
      select d as host, count(*)::int as n from links l, unnest(l.host_domains) d where l.deleted_at is null group by d
    )
    select b.host, b.source, b.created_at, coalesce(h.n, 0) as links
    from blocked_hosts b left join hits h on h.host = b.host ${only}
    order by b.host, b.source`
}

/** `host` in the form of links/hosts.ts. False when it was blocked by hand already. */
export async function blockHost(sql: Sql, host: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const added = await tx`insert into blocked_hosts (host, source) values (${host}, ${MANUAL_SOURCE}) on conflict (host, source) do nothing`
    if (added.count === 1) await tx`select pg_notify(${LINK_CHANNEL}, ${FLUSH_ALL})`
    return added.count === 1
  })
}

/**
 * Removes a manual entry. `removed` is false when there was none; `stillListedBy` names the feeds
 * that list the host too (it stays blocked until they drop it).
 */
export async function unblockHost(sql: Sql, host: string): Promise<{ removed: boolean; stillListedBy: string[] }> {
  return sql.begin(async (tx) => {
    const removed = await tx`delete from blocked_hosts where host = ${host} and source = ${MANUAL_SOURCE}`
    if (removed.count === 1) await tx`select pg_notify(${LINK_CHANNEL}, ${FLUSH_ALL})`
    const others = await tx<{ source: string }[]>`select source from blocked_hosts where host = ${host} order by source`
    return { removed: removed.count === 1, stillListedBy: others.map((r) => r.source) }
  })
}
