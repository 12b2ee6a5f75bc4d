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
 * Creates a link under the owner's row lock, so the cap holds under any concurrency.
 * A requested code that exists, live or deleted, is 'taken'; a generated one is retried.
 */
export function insertLink(
  sql: Sql,
  userId: string,
  link: { url: string; location: string; code?: string; expiresAt: Date | null },
  maxLinks: number,
): Promise<CreateResult> {
  return sql.begin(async (tx): Promise<CreateResult> => {
    const [owner] = await tx`select 1 from users where id = ${userId} for update`
    if (owner === undefined) return 'no-user'
    const [{ n } = { n: 0 }] = await tx<{ n: number }[]>`
      select count(*)::int as n from links where user_id = ${userId} and deleted_at is null`
    if (n >= maxLinks) return 'limit'
    for (let attempt = 1; ; attempt++) {
      const code = link.code ?? generateCode()
      const [row] = await tx<LinkRow[]>`
        insert into links (code, user_id, url, location, expires_at)
        values (${code}, ${userId}, ${link.url}, ${link.location}, ${link.expiresAt})
        on conflict (code) do nothing
        returning ${columns(tx)}`
      if (row !== undefined) {
        // A node may remember this code as unknown: tell it to forget.
        await tx`select pg_notify(${LINK_CHANNEL}, ${code})`
        return row
      }
      /* c8 ignore next -- 62^8 codes: five collisions in a row do not happen */
      if (link.code !== undefined || attempt === GENERATE_ATTEMPTS) return 'taken'
    }
  })
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

export function updateLink(sql: Sql, userId: string, code: string, change: LinkChange): Promise<LinkRow | undefined> {
  const keepExpiry = change.expiresAt === undefined
  return sql.begin(async (tx) => {
    // updated_at moves forward by at least a millisecond, the precision clients see.
    const [row] = await tx<LinkRow[]>`
      update links set
        url = coalesce(${change.url?.url ?? null}::text, url),
        location = coalesce(${change.url?.location ?? null}::text, location),
        expires_at = case when ${keepExpiry}::boolean then expires_at else ${change.expiresAt ?? null}::timestamptz end,
        updated_at = greatest(now(), updated_at + interval '1 millisecond')
      where code = ${code} and user_id = ${userId} and deleted_at is null
      returning ${columns(tx)}`
    if (row !== undefined) await tx`select pg_notify(${LINK_CHANNEL}, ${code})`
    return row
  })
}

/** Leaves a tombstone: the code answers 404 from now on and is never assigned again. */
export function deleteLink(sql: Sql, userId: string, code: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const result = await tx`
      update links set user_id = null, url = null, location = null, deleted_at = now()
      where code = ${code} and user_id = ${userId} and deleted_at is null`
    if (result.count === 1) await tx`select pg_notify(${LINK_CHANNEL}, ${code})`
    return result.count === 1
  })
}

/** The redirect look-up for a batch of codes: primary-key reads of the precomputed Location and the expiry. */
export function findLocations(sql: Sql, codes: string[]): Promise<Array<{ code: string; location: string; expires_at: Date | null }>> {
  return sql<Array<{ code: string; location: string; expires_at: Date | null }>>`
    select code, location, expires_at from links where code = any(${codes}::text[]) and deleted_at is null`
}
