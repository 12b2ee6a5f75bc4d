// Session queries. Expiry is decided by the database clock, so every node agrees (spec §3).
import type { Sql } from '../db/index.js'

export interface Session {
  tokenHash: Buffer
  userId: string
}

export interface NewSession {
  created_at: Date
  expires_at: Date
}

export async function insertSession(sql: Sql, tokenHash: Buffer, userId: string, ttlSeconds: number): Promise<NewSession> {
  const [row] = await sql<NewSession[]>`
    insert into sessions (token_hash, user_id, expires_at)
    values (${tokenHash}, ${userId}, now() + make_interval(secs => ${ttlSeconds}))
    returning created_at, expires_at`
  return row!
}

/** The live session for a token digest; an expired one is removed when presented (spec §3). */
export async function findSession(sql: Sql, tokenHash: Buffer): Promise<Session | undefined> {
  const [row] = await sql<{ user_id: string; live: boolean }[]>`
    select user_id, now() <= expires_at as live from sessions where token_hash = ${tokenHash}`
  if (row === undefined) return undefined
  if (!row.live) {
    await sql`delete from sessions where token_hash = ${tokenHash}`
    return undefined
  }
  return { tokenHash, userId: row.user_id }
}

export async function deleteSession(sql: Sql, tokenHash: Buffer): Promise<void> {
  await sql`delete from sessions where token_hash = ${tokenHash}`
}

export async function deleteExpiredSessions(sql: Sql): Promise<number> {
  const result = await sql`delete from sessions where expires_at < now()`
  return result.count
}
