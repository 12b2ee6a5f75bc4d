// Session queries. Expiry is decided by the database clock, so every node agrees (spec §3).
import type { Sql } from '../db/types.js'

export interface Session {
  tokenHash: Buffer
  userId: string
}

export interface NewSession {
  created_at: Date
  expires_at: Date
}

/**
 * A new session for a user whose password hash is still the one just verified, and who is not
 * disabled; undefined when that no longer holds (the password changed, or the account was
 * deleted or disabled, while the hash was being checked). The row lock puts it in order with a
 * password change in flight: a login that raced the change cannot outlive it.
 */
export async function insertSession(
  sql: Sql,
  tokenHash: Buffer,
  user: { id: string; password_hash: string },
  ttlSeconds: number,
): Promise<NewSession | undefined> {
  const [row] = await sql<NewSession[]>`
    insert into sessions (token_hash, user_id, expires_at)
    select ${tokenHash}, id, now() + make_interval(secs => ${ttlSeconds})
    from users where id = ${user.id} and password_hash = ${user.password_hash} and disabled_at is null
    for share
    returning created_at, expires_at`
  return row
}

/**
 * The live session for a token digest and how long it has left (ms, by the database clock); an
 * expired one is removed when presented (spec §3). Its last_used_at is written at most once a
 * minute, so that most requests only read.
 */
export async function findSession(sql: Sql, tokenHash: Buffer): Promise<{ session: Session; leftMs: number } | undefined> {
  const [row] = await sql<{ user_id: string; left_ms: number; stale: boolean }[]>`
    select user_id, extract(epoch from expires_at - now())::float8 * 1000 as left_ms,
           last_used_at < now() - interval '1 minute' as stale
    from sessions where token_hash = ${tokenHash}`
  if (row === undefined) return undefined
  if (row.left_ms < 0) {
    await sql`delete from sessions where token_hash = ${tokenHash}`
    return undefined
  }
  if (row.stale) await sql`update sessions set last_used_at = now() where token_hash = ${tokenHash}`
  return { session: { tokenHash, userId: row.user_id }, leftMs: row.left_ms }
}

export async function deleteSession(sql: Sql, tokenHash: Buffer): Promise<void> {
  await sql`delete from sessions where token_hash = ${tokenHash}`
}

export async function deleteExpiredSessions(sql: Sql): Promise<number> {
  const result = await sql`delete from sessions where expires_at < now()`
  return result.count
}

export interface SessionRow {
  /** the public id: neither the token nor its digest */
  id: string
  created_at: Date
  expires_at: Date
  last_used_at: Date
  current: boolean
}

/** A user's live sessions, newest first; `current` marks the one with this digest. */
export function listSessions(sql: Sql, userId: string, current: Buffer): Promise<SessionRow[]> {
  return sql<SessionRow[]>`
    select id::text as id, created_at, expires_at, last_used_at, token_hash = ${current} as current
    from sessions where user_id = ${userId} and now() <= expires_at
    order by created_at desc, id`
}

/** Ends one session of a user by its public id; false when the user has no such session. */
export async function deleteSessionById(sql: Sql, userId: string, id: string): Promise<boolean> {
  const result = await sql`delete from sessions where id = ${id}::uuid and user_id = ${userId}`
  return result.count === 1
}

/** Ends every session of a user but the one with this digest. */
export async function deleteOtherSessions(sql: Sql, userId: string, keep: Buffer): Promise<void> {
  await sql`delete from sessions where user_id = ${userId} and token_hash <> ${keep}`
}
