// Bearer authentication for the routes that need a session (contract §3).
import type { Sql } from '../db/index.js'
import { unauthorized } from '../http/errors.js'
import { findSession, type Session } from './sessions.js'
import { hashToken } from './tokens.js'

/** Resolves a bearer token to its live session, or 401. */
export async function authenticate(sql: Sql, token: string): Promise<Session> {
  const session = await findSession(sql, hashToken(token))
  if (session === undefined) throw unauthorized()
  return session
}
