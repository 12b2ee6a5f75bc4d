// /api/v1/auth/sessions: a user's live sessions, and ending them. An ended session gets
// 401 at once on this node (its cached sessions are forgotten before the answer) and on the others
// as soon as the change feed brings the database's notice (session-cache.ts).
import { sessionOf, type Ctx } from '../context.js'
import { sessionNotFound } from '../http/errors.js'
import { json, noContent, type Reply } from '../http/reply.js'
import { deleteOtherSessions, deleteSessionById, listSessions } from './sessions.js'

/** What these routes may touch. */
type SessionsCtx = Ctx<'sql' | 'sessions'>

// The public id is a UUID; anything else is not found, without a database look-up.
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export async function getSessions(ctx: SessionsCtx): Promise<Reply> {
  const session = sessionOf(ctx)
  const rows = await listSessions(ctx.deps.sql, session.userId, session.tokenHash)
  const sessions = rows.map((s) => ({
    id: s.id,
    created_at: s.created_at.toISOString(),
    expires_at: s.expires_at.toISOString(),
    last_used_at: s.last_used_at.toISOString(),
    current: s.current,
  }))
  return json(200, { sessions })
}

/** Ends one of the caller's sessions, the current one included (that is a logout). */
export async function removeSession(ctx: SessionsCtx): Promise<Reply> {
  const session = sessionOf(ctx)
  if (!SESSION_ID.test(ctx.param)) throw sessionNotFound()
  if (!(await deleteSessionById(ctx.deps.sql, session.userId, ctx.param))) throw sessionNotFound()
  ctx.deps.sessions.forgetUser(session.userId)
  return noContent()
}

/** Ends every session of the caller but the current one. */
export async function removeOtherSessions(ctx: SessionsCtx): Promise<Reply> {
  const session = sessionOf(ctx)
  await deleteOtherSessions(ctx.deps.sql, session.userId, session.tokenHash)
  ctx.deps.sessions.forgetUser(session.userId)
  return noContent()
}
