// Account queries. HTTP stays out: a taken username is a result, not a status.
import type { Sql, Tx } from '../db/types.js'
import { LINK_CHANNEL } from '../db/channels.js'

export interface UserRow {
  id: string
  username: string
  display_name: string
  created_at: Date
}

export async function insertUser(
  sql: Sql | Tx,
  user: { username: string; displayName: string; passwordHash: string },
): Promise<UserRow | 'taken'> {
  // The unique index decides, so two racing registrations cannot both win. No error is raised
  // for the loser: it may run inside an Idempotency-Key's transaction, which an error would end.
  const [row] = await sql<UserRow[]>`
    insert into users (username, display_name, password_hash)
    values (${user.username}, ${user.displayName}, ${user.passwordHash})
    on conflict (username) do nothing
    returning id, username, display_name, created_at`
  return row ?? 'taken'
}

export interface LoginRow {
  id: string
  password_hash: string
  /** an operator disabled the account: it may not log in */
  disabled: boolean
}

export async function findLogin(sql: Sql, username: string): Promise<LoginRow | undefined> {
  const [row] = await sql<LoginRow[]>`
    select id, password_hash, disabled_at is not null as disabled from users where username = ${username}`
  return row
}

/** Swaps the stored hash for a new one of the same password, unless it changed meanwhile. */
export async function replacePasswordHash(sql: Sql, id: string, from: string, to: string): Promise<void> {
  await sql`update users set password_hash = ${to} where id = ${id} and password_hash = ${from}`
}

export async function findUser(sql: Sql, id: string): Promise<UserRow | undefined> {
  const [row] = await sql<UserRow[]>`select id, username, display_name, created_at from users where id = ${id}`
  return row
}

export async function findPasswordHash(sql: Sql, id: string): Promise<string | undefined> {
  const [row] = await sql<{ password_hash: string }[]>`select password_hash from users where id = ${id}`
  return row?.password_hash
}

export interface UserUpdate {
  displayName?: string
  /** the new hash, and the stored one the current password was verified against */
  password?: { hash: string; verifiedAgainst: string }
  /** the session making the change: it must still exist, and it stays */
  session: Buffer
}

/**
 * Updates what is given; a new password also revokes every other session of the user. 'gone':
 * the account or the session is no more; 'stale': the password changed since it was verified.
 */
export async function updateUser(sql: Sql, id: string, change: UserUpdate): Promise<UserRow | 'gone' | 'stale'> {
  return sql.begin(async (tx) => {
    // The row lock orders this against logins, other changes and deletion of the same account.
    const [current] = await tx<{ password_hash: string }[]>`select password_hash from users where id = ${id} for update`
    if (current === undefined) return 'gone'
    // A statement of its own, so its snapshot is taken after the lock: a change that committed
    // while we waited (and revoked this session) is seen.
    const [session] = await tx`select 1 from sessions where token_hash = ${change.session}`
    if (session === undefined) return 'gone'
    if (change.password !== undefined && current.password_hash !== change.password.verifiedAgainst) return 'stale'
    const [row] = await tx<UserRow[]>`
      update users set
        display_name = coalesce(${change.displayName ?? null}::text, display_name),
        password_hash = coalesce(${change.password?.hash ?? null}::text, password_hash),
        updated_at = now()
      where id = ${id}
      returning id, username, display_name, created_at`
    if (change.password !== undefined) {
      await tx`delete from sessions where user_id = ${id} and token_hash <> ${change.session}`
    }
    return row!
  })
}

/**
 * Deletes the account with its sessions; its links become tombstones so their codes are never
 * reassigned, and every node is told to forget them.
 */
export async function deleteUser(sql: Sql, id: string): Promise<string[]> {
  return sql.begin(async (tx) => {
    // The owner's row lock first: a link being created for this user finishes before, or sees
    // no user after (insertLink takes the same lock).
    await tx`select 1 from users where id = ${id} for update`
    const codes = await tx<{ code: string }[]>`select tombstone_links(${id}, null, ${LINK_CHANNEL}) as code`
    await tx`delete from users where id = ${id}`
    return codes.map((c) => c.code)
  })
}

