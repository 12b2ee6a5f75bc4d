// Link queries. Every write tells other nodes (NOTIFY link_changed, sent at commit) to forget the
// code; the redirect path reads one row by primary key.
import type { Sql, Tx } from '../db/index.js'
import { generateCode } from './short-code.js'

export const LINK_CHANNEL = 'link_changed'
const GENERATE_ATTEMPTS = 5

export interface LinkRow {
  code: string
  url: string
  created_at: Date
  updated_at: Date
  visits: number
  last_visited_at: Date | null
  expires_at: Date | null
}

const columns = (sql: Sql | Tx) =>
  sql`code, url, created_at, updated_at, visits::float8 as visits, last_visited_at, expires_at`

export type CreateResult = LinkRow | 'limit' | 'taken' | 'no-user'

/**
 * Creates a link in one round trip (create_link in sql/0006_fewer_round_trips.sql): under the
 * owner's row lock, so the cap holds under any concurrency. A requested code that exists, live or
 * deleted, is 'taken'; generated ones are tried in turn.
 */
export async function insertLink(
  sql: Sql,
  userId: string,
  link: { url: string; location: string; code?: string; expiresAt: Date | null },
  maxLinks: number,
): Promise<CreateResult> {
  const codes = link.code !== undefined ? [link.code] : Array.from({ length: GENERATE_ATTEMPTS }, generateCode)
  const [r] = await sql<CreatedRow[]>`
    select * from create_link(${userId}, ${codes}::text[], ${link.url}, ${link.location}, ${link.expiresAt}, ${maxLinks}, ${LINK_CHANNEL})`
  if (r!.r_outcome !== 'created') return r!.r_outcome as 'limit' | 'taken' | 'no-user'
  return {
    code: r!.r_code,
    url: r!.r_url,
    created_at: r!.r_created_at,
    updated_at: r!.r_updated_at,
    visits: r!.r_visits,
    last_visited_at: r!.r_last_visited_at,
    expires_at: r!.r_expires_at,
  }
}

interface CreatedRow {
  r_outcome: string
  r_code: string
  r_url: string
  r_created_at: Date
  r_updated_at: Date
  r_visits: number
  r_last_visited_at: Date | null
  r_expires_at: Date | null
}

export function listLinks(sql: Sql, userId: string): Promise<LinkRow[]> {
  return sql<LinkRow[]>`
    select ${columns(sql)} from links
    where user_id = ${userId} and deleted_at is null
    order by id desc`
}

export async function findLink(sql: Sql, userId: string, code: string): Promise<LinkRow | undefined> {
  const [row] = await sql<LinkRow[]>`
    select ${columns(sql)} from links where code = ${code} and user_id = ${userId} and deleted_at is null`
  return row
}

/** What a PATCH changes: an absent field stays; an expiry of null clears it. */
export interface LinkChange {
  url?: { url: string; location: string }
  expiresAt?: Date | null
}

/** One statement, so one round trip: the change and the notice to every node commit together. */
export async function updateLink(sql: Sql, userId: string, code: string, change: LinkChange): Promise<LinkRow | undefined> {
  const keepExpiry = change.expiresAt === undefined
  // updated_at moves forward by at least a millisecond, the precision clients see.
  const [row] = await sql<LinkRow[]>`
    with changed as (
      update links set
        url = coalesce(${change.url?.url ?? null}::text, url),
        location = coalesce(${change.url?.location ?? null}::text, location),
        expires_at = case when ${keepExpiry}::boolean then expires_at else ${change.expiresAt ?? null}::timestamptz end,
        updated_at = greatest(now(), updated_at + interval '1 millisecond')
      where code = ${code} and user_id = ${userId} and deleted_at is null
      returning ${columns(sql)}
    )
    select changed.*, pg_notify(${LINK_CHANNEL}, changed.code)::text as notified from changed`
  if (row === undefined) return undefined
  const { notified: _, ...link } = row as LinkRow & { notified: unknown }
  return link
}

/** Leaves a tombstone: the code answers 404 from now on and is never assigned again. */
export async function deleteLink(sql: Sql, userId: string, code: string): Promise<boolean> {
  const rows = await sql`
    with gone as (
      update links set user_id = null, url = null, location = null, deleted_at = now()
      where code = ${code} and user_id = ${userId} and deleted_at is null
      returning code
    )
    select pg_notify(${LINK_CHANNEL}, gone.code) from gone`
  return rows.length === 1
}

/** The redirect look-up for a batch of codes: primary-key reads of the precomputed Location and the expiry. */
export function findLocations(sql: Sql, codes: string[]): Promise<Array<{ code: string; location: string; expires_at: Date | null }>> {
  return sql<Array<{ code: string; location: string; expires_at: Date | null }>>`
    select code, location, expires_at from links where code = any(${codes}::text[]) and deleted_at is null`
}
