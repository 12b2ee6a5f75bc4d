// Bearer authentication for the routes that need a session (contract §3): from this node's cache
// of checked sessions when it can (session-cache.ts says when that is), else one database read.
import type { Sql } from '../db/types.js'
import { unauthorized } from '../http/errors.js'
import { keyOf, type SessionCache } from './session-cache.js'
import { findSession, type Session } from './sessions.js'
import { hashToken } from './tokens.js'

/** Resolves a bearer token to its live session, or 401. */
export async function authenticate(sql: Sql, sessions: SessionCache, token: string): Promise<Session> {
  const tokenHash = hashToken(token)
  const key = keyOf(tokenHash)
  const cached = sessions.get(key)
  if (cached !== undefined) return cached
  const epoch = sessions.epoch
  const found = await findSession(sql, tokenHash)
  if (found === undefined) throw unauthorized()
  sessions.set(key, found.session, epoch, found.leftMs)
  return found.session
}
