// POST /api/v1/auth/login and /logout (spec §5, contract §3).
import { clientWaits, sessionOf, type Ctx } from '../context.js'
import type { Sql } from '../db/index.js'
import { invalidCredentials, unauthorized } from '../http/errors.js'
import { json, noContent, type Reply } from '../http/reply.js'
import { findLogin } from '../users/queries.js'
import { parseCredentials } from '../users/validate.js'
import { verifyPassword } from './passwords.js'
import { deleteSession, findSession, insertSession, type Session } from './sessions.js'
import { generateToken, hashToken } from './tokens.js'

export async function login(ctx: Ctx): Promise<Reply> {
  const { username, password } = parseCredentials(ctx.body)
  const { sql, config, dummyPasswordHash } = ctx.deps
  const user = await findLogin(sql, username)
  // An unknown username spends the same hashing work, so timing does not reveal which it was.
  const ok = await ctx.deadline.excluding(verifyPassword(password, user?.password_hash ?? dummyPasswordHash, clientWaits(ctx)))
  if (user === undefined || !ok) throw invalidCredentials()
  const token = generateToken()
  const session = await insertSession(sql, hashToken(token), user, config.sessionTtlSeconds)
  if (session === undefined) throw invalidCredentials() // the password changed meanwhile
  // The body is a credential: no cache along the way may keep it (as RFC 6749 5.1 asks of tokens).
  const body = { token, created_at: session.created_at.toISOString(), expires_at: session.expires_at.toISOString() }
  return json(200, body, { 'cache-control': 'no-store' })
}

export async function logout(ctx: Ctx): Promise<Reply> {
  await deleteSession(ctx.deps.sql, sessionOf(ctx).tokenHash)
  return noContent()
}

/** Resolves a bearer token to its live session, or 401. */
export async function authenticate(sql: Sql, token: string): Promise<Session> {
  const session = await findSession(sql, hashToken(token))
  if (session === undefined) throw unauthorized()
  return session
}
