// An operator's link actions, for the admin CLI. Disabling or enabling a link tells
// every node to forget its code (NOTIFY on LINK_CHANNEL, sent at commit).
import type { Sql } from '../db/types.js'
import { LINK_CHANNEL } from '../db/channels.js'

export interface AdminLinkRow {
  code: string
  username: string
  url: string
  created_at: Date
  expires_at: Date | null
  visits: number
  disabled_at: Date | null
  disabled_reason: string | null
  /** its host, or a parent domain of it, is on the block list */
  host_blocked: boolean
  owner_disabled: boolean
  /** open reports from enough addresses stopped it until an operator resolves them */
  suspended: boolean
  /** a destination check found its redirect chain leading to a blocked host (link-checks) */
  flagged: boolean
}

/** Live links, newest first; only `username`'s when given. */
export function listAllLinks(sql: Sql, username?: string): Promise<AdminLinkRow[]> {
  const only = username === undefined ? sql`` : sql`and u.username = ${username}`
  return sql<AdminLinkRow[]>`
    select l.code, u.username, l.url, l.created_at, l.expires_at, l.visits::float8 as visits,
           l.disabled_at, l.disabled_reason, l.host_blocked, u.disabled_at is not null as owner_disabled,
           l.suspended_at is not null as suspended, coalesce(l.stop_reason = 'flagged', false) as flagged
    from live_links l join users u on u.id = l.user_id
    where true ${only}
    order by l.id desc`
}

/**
 * Disables a live link, with the operator's reason (a second disable replaces the reason when one
 * is given). Undefined when there is no live link with this code.
 */
export async function disableLink(sql: Sql, code: string, reason: string | null): Promise<{ changed: boolean } | undefined> {
  const [row] = await sql<{ changed: boolean }[]>`
    with target as (
      select code, disabled_at is null as changed from links where code = ${code} and deleted_at is null for update
    ), done as (
      update links l set disabled_at = coalesce(l.disabled_at, now()), disabled_reason = coalesce(${reason}::text, l.disabled_reason)
      from target where l.code = target.code
      returning l.code
    )
    select target.changed, pg_notify(${LINK_CHANNEL}, done.code)::text as notified from target join done using (code)`
  return row === undefined ? undefined : { changed: row.changed }
}

/** Enables a link an operator disabled. Undefined when there is no live link with this code. */
export async function enableLink(sql: Sql, code: string): Promise<{ changed: boolean } | undefined> {
  const [row] = await sql<{ changed: boolean }[]>`
    with target as (
      select code, disabled_at is not null as changed from links where code = ${code} and deleted_at is null for update
    ), done as (
      update links l set disabled_at = null, disabled_reason = null from target where l.code = target.code
      returning l.code
    )
    select target.changed, pg_notify(${LINK_CHANNEL}, done.code)::text as notified from target join done using (code)`
  return row === undefined ? undefined : { changed: row.changed }
}
