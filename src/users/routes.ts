// POST /api/v1/users and /api/v1/users/me (contract §3).
import { clientKey, requester, sessionOf, type Ctx } from '../context.js'
import { currentPasswordIncorrect, unauthorized, usernameTaken } from '../http/errors.js'
import { json, noContent, type Reply } from '../http/reply.js'
import { takeChangeAllowance } from '../ratelimit/password-limits.js'
import { deleteUser, findPasswordHash, findUser, insertUser, updateUser, type UserRow, type UserUpdate } from './queries.js'
import { parseProfileChange, parseRegistration } from './validate.js'

/** What the account routes may touch. */
type UsersCtx = Ctx<'sql' | 'config' | 'passwords' | 'buckets' | 'sessions' | 'forgetLinks'>

const present = (u: UserRow) => ({
  id: u.id,
  username: u.username,
  display_name: u.display_name,
  created_at: u.created_at.toISOString(),
})

export async function register(ctx: UsersCtx): Promise<Reply> {
  const input = parseRegistration(ctx.body)
  const passwordHash = await ctx.deadline.excluding(ctx.deps.passwords.hash(input.password, requester(ctx, `name ${input.username}`)))
  const user = await ctx.effect((sql) => insertUser(sql, { username: input.username, displayName: input.displayName, passwordHash }))
  if (user === 'taken') throw usernameTaken()
  return json(201, present(user))
}

export async function getMe(ctx: UsersCtx): Promise<Reply> {
  const user = await findUser(ctx.deps.sql, sessionOf(ctx).userId)
  if (user === undefined) throw unauthorized() // deleted between auth and now
  return json(200, present(user))
}

export async function patchMe(ctx: UsersCtx): Promise<Reply> {
  const session = sessionOf(ctx)
  const change = parseProfileChange(ctx.body)
  const { sql, passwords, buckets } = ctx.deps
  let password: UserUpdate['password']
  if (change.password !== undefined) {
    // Each check costs a hash: limited per account and per address (a display name alone is free).
    await takeChangeAllowance(buckets, session.userId, clientKey(ctx))
    const stored = await findPasswordHash(sql, session.userId)
    if (stored === undefined) throw unauthorized()
    const who = requester(ctx, `user ${session.userId}`)
    if (!(await ctx.deadline.excluding(passwords.verify(change.password.current, stored, who))).ok) throw currentPasswordIncorrect()
    password = { hash: await ctx.deadline.excluding(passwords.hash(change.password.next, who)), verifiedAgainst: stored }
  }
  const user = await updateUser(sql, session.userId, { displayName: change.displayName, password, session: session.tokenHash })
  if (user === 'gone') throw unauthorized() // deleted or logged out meanwhile
  if (user === 'stale') throw currentPasswordIncorrect() // another change came first
  if (password !== undefined) ctx.deps.sessions.forgetUser(session.userId) // its other sessions ended
  return json(200, present(user))
}

export async function deleteMe(ctx: UsersCtx): Promise<Reply> {
  const { userId } = sessionOf(ctx)
  await takeChangeAllowance(ctx.deps.buckets, userId, clientKey(ctx))
  const codes = await deleteUser(ctx.deps.sql, userId)
  ctx.deps.sessions.forgetUser(userId)
  ctx.deps.forgetLinks(codes)
  return noContent()
}
