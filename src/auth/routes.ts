// POST /api/v1/auth/login and /logout (spec §5, contract §3).
import { setTimeout as sleep } from 'node:timers/promises'
import { requester, sessionOf, type Ctx } from '../context.js'
import { accountDisabled, invalidCredentials } from '../http/errors.js'
import { json, noContent, type Reply } from '../http/reply.js'
import { noteFailedLogin } from '../ratelimit/password-limits.js'
import { findLogin, replacePasswordHash } from '../users/queries.js'
import { parseCredentials } from '../users/validate.js'
import { deleteSession, insertSession } from './sessions.js'
import { generateToken, hashToken } from './tokens.js'

/** What these routes may touch. */
type AuthCtx = Ctx<'sql' | 'config' | 'passwords' | 'buckets' | 'sessions'>

export async function login(ctx: AuthCtx): Promise<Reply> {
  const { username, password } = parseCredentials(ctx.body)
  const { sql, config, passwords, buckets } = ctx.deps
  const user = await findLogin(sql, username)
  // An unknown username costs the same hashing work, so timing does not reveal which it was.
  const who = requester(ctx, user === undefined ? `name ${username}` : `user ${user.id}`)
  const verdict = await ctx.deadline.excluding(passwords.verify(password, user?.password_hash, who))
  if (user === undefined || !verdict.ok) {
    // Repeated failures for one username are answered ever later; a correct password never is.
    const delayMs = await noteFailedLogin(buckets, username)
    await ctx.deadline.excluding(sleep(delayMs))
    throw invalidCredentials()
  }
  // Only after the password: to anyone else a disabled account looks like any other.
  if (user.disabled) throw accountDisabled()
  const token = generateToken()
  const session = await insertSession(sql, hashToken(token), user, config.sessionTtlSeconds)
  if (session === undefined) throw invalidCredentials() // the password changed meanwhile
  // An older scheme or cost is replaced now that the password is known (unless it changed meanwhile).
  if (verdict.rehash) await replacePasswordHash(sql, user.id, user.password_hash, await passwords.hash(password, who))
  // The body is a credential: no cache along the way may keep it (as RFC 6749 5.1 asks of tokens).
  const body = { token, created_at: session.created_at.toISOString(), expires_at: session.expires_at.toISOString() }
  return json(200, body, { 'cache-control': 'no-store' })
}

export async function logout(ctx: AuthCtx): Promise<Reply> {
  const session = sessionOf(ctx)
  await deleteSession(ctx.deps.sql, session.tokenHash)
  ctx.deps.sessions.forgetUser(session.userId)
  return noContent()
}
