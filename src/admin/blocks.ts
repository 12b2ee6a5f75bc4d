// The block list of link targets, for the admin CLI. A change tells every node to
// forget every cached redirect (FLUSH_ALL): which codes point at a host is not worth finding out.
import type { Sql } from '../db/types.js'
import { FLUSH_ALL, LINK_CHANNEL } from '../db/channels.js'

export interface BlockedHostRow {
  host: string
  created_at: Date
  /** live links whose host is this one or a subdomain of it */
  links: number
}

export function listBlockedHosts(sql: Sql): Promise<BlockedHostRow[]> {
  return sql<BlockedHostRow[]>`
    select b.host, b.created_at,
           (select count(*)::int from links l where l.deleted_at is null and b.host = any(l.host_domains)) as links
    from blocked_hosts b order by b.host`
}

/** `host` in the form of links/hosts.ts. False when it was blocked already. */
export async function blockHost(sql: Sql, host: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const added = await tx`insert into blocked_hosts (host) values (${host}) on conflict (host) do nothing`
    if (added.count === 1) await tx`select pg_notify(${LINK_CHANNEL}, ${FLUSH_ALL})`
    return added.count === 1
  })
}

/** False when it was not blocked. */
export async function unblockHost(sql: Sql, host: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const removed = await tx`delete from blocked_hosts where host = ${host}`
    if (removed.count === 1) await tx`select pg_notify(${LINK_CHANNEL}, ${FLUSH_ALL})`
    return removed.count === 1
  })
}
