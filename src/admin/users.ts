// An operator's account actions, for the admin CLI. Each one that stops or restarts
// redirects tells every node (NOTIFY on LINK_CHANNEL, sent at commit) to forget the account's
// codes; ending sessions tells them through the sessions trigger (SESSION_CHANNEL).
import type { Sql, Tx } from '../db/types.js'
import { LINK_CHANNEL } from '../db/channels.js'

export interface AdminUserRow {
  id: string
  username: string
  display_name: string
  created_at: Date
  disabled_at: Date | null
  links: number
}

export function listUsers(sql: Sql): Promise<AdminUserRow[]> {
  return sql<AdminUserRow[]>`
    select u.id, u.username, u.display_name, u.created_at, u.disabled_at,
           (select count(*)::int from links l where l.user_id = u.id and l.deleted_at is null) as links
    from users u order by u.username`
}

export async function findUserId(sql: Sql, username: string): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`select id from users where username = ${username}`
  return row?.id
}

/** Tells every node that these codes' redirects changed, with the transaction. */
async function notifyCodesOf(tx: Tx, userId: string): Promise<void> {
  await tx`select pg_notify(${LINK_CHANNEL}, code) from links where user_id = ${userId} and deleted_at is null`
}

/**
 * Disables an account: its sessions end and its links answer 410 on every node. Undefined for an
 * unknown username; `changed` false when it already was disabled (its sessions are ended anyway).
 */
export async function disableUser(sql: Sql, username: string): Promise<{ changed: boolean; sessionsEnded: number } | undefined> {
  return sql.begin(async (tx) => {
    const [user] = await tx<{ id: string; was: boolean }[]>`
      select id, disabled_at is not null as was from users where username = ${username} for update`
    if (user === undefined) return undefined
    if (!user.was) await tx`update users set disabled_at = now(), updated_at = now() where id = ${user.id}`
    const ended = await tx`delete from sessions where user_id = ${user.id}`
    await notifyCodesOf(tx, user.id)
    return { changed: !user.was, sessionsEnded: ended.count }
  })
}

/** Enables an account again: it may log in, and its links redirect again. */
export async function enableUser(sql: Sql, username: string): Promise<{ changed: boolean } | undefined> {
  return sql.begin(async (tx) => {
    const [user] = await tx<{ id: string; was: boolean }[]>`
      select id, disabled_at is not null as was from users where username = ${username} for update`
    if (user === undefined) return undefined
    if (user.was) {
      await tx`update users set disabled_at = null, updated_at = now() where id = ${user.id}`
      await notifyCodesOf(tx, user.id)
    }
    return { changed: user.was }
  })
}

/** A new password hash; every session of the account ends. Undefined for an unknown username. */
export async function resetPassword(sql: Sql, username: string, hash: string): Promise<{ sessionsEnded: number } | undefined> {
  return sql.begin(async (tx) => {
    const [user] = await tx<{ id: string }[]>`
      update users set password_hash = ${hash}, updated_at = now() where username = ${username} returning id`
    if (user === undefined) return undefined
    const ended = await tx`delete from sessions where user_id = ${user.id}`
    return { sessionsEnded: ended.count }
  })
}
