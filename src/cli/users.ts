// link-service user ...: accounts, as an operator sees them. Passwords come from
// standard input only; each action is logged as one JSON line on stderr, never with a secret.
import { deleteUser, insertUser } from '../users/queries.js'
import { parseNewPassword, parseRegistration } from '../users/validate.js'
import { disableUser, enableUser, findUserId, listUsers, resetPassword } from '../admin/users.js'
import { HttpError } from '../http/errors.js'
import { Passwords } from '../passwords/passwords.js'
import { CliError, columns, expectArgs, usernameArg, type CliCommand, type CliContext } from './command.js'

/** Field validation as the API does it; its message (which never holds a value) as the reason. */
function validated<T>(parse: () => T): T {
  try {
    return parse()
  } catch (err) {
    if (err instanceof HttpError) throw new CliError(err.message)
    throw err
  }
}

/** The service's own hashing (argon2id at the configured cost), on one worker thread. */
async function hashPassword(ctx: CliContext, password: string): Promise<string> {
  const passwords = new Passwords(ctx.config.argon2, 1)
  try {
    return await passwords.hash(password)
  } finally {
    await passwords.close()
  }
}

const noSuchUser = (username: string) => new CliError(`no such user: ${username}`)

const list: CliCommand = {
  words: ['user', 'list'],
  usage: 'user list [--json]',
  async run(ctx, args) {
    expectArgs(args, this.usage, 0)
    const users = await listUsers((await ctx.db()).sql)
    const value = users.map((u) => ({
      id: u.id,
      username: u.username,
      display_name: u.display_name,
      created_at: u.created_at.toISOString(),
      disabled: u.disabled_at !== null,
      disabled_at: u.disabled_at?.toISOString() ?? null,
      links: u.links,
    }))
    const rows = [['USERNAME', 'STATE', 'LINKS', 'CREATED', 'DISPLAY NAME']]
    for (const u of value) rows.push([u.username, u.disabled ? 'disabled' : 'active', String(u.links), u.created_at, u.display_name])
    ctx.print(value.length === 0 ? 'no users' : columns(rows), value)
  },
}

const create: CliCommand = {
  words: ['user', 'create'],
  usage: 'user create <username> [--display-name NAME]   (password on stdin)',
  async run(ctx, args) {
    const { words, options } = expectArgs(args, this.usage, 1, ['display-name'])
    const [name] = words as [string]
    const password = await ctx.readSecret(`Password for ${name}: `)
    // The same rules as registration; the display name defaults to the username as given.
    const input = validated(() => parseRegistration({ username: name, password, display_name: options.get('display-name') ?? name }))
    const sql = (await ctx.db()).sql
    const user = await insertUser(sql, { username: input.username, displayName: input.displayName, passwordHash: await hashPassword(ctx, input.password) })
    if (user === 'taken') throw new CliError(`username is already taken: ${input.username}`)
    const value = { action: 'user.create', id: user.id, username: user.username, display_name: user.display_name, created_at: user.created_at.toISOString() }
    ctx.report(`created ${user.username} (${user.id})`, value)
  },
}

const reset: CliCommand = {
  words: ['user', 'reset-password'],
  usage: 'user reset-password <username>   (password on stdin; ends its sessions)',
  async run(ctx, args) {
    const username = usernameArg(expectArgs(args, this.usage, 1).words[0]!)
    const sql = (await ctx.db()).sql
    if ((await findUserId(sql, username)) === undefined) throw noSuchUser(username)
    const secret = await ctx.readSecret(`New password for ${username}: `)
    const password = validated(() => parseNewPassword(secret))
    const result = await resetPassword(sql, username, await hashPassword(ctx, password))
    if (result === undefined) throw noSuchUser(username) // deleted while the password was hashed
    ctx.report(`new password set for ${username}; ${result.sessionsEnded} session(s) ended`, { action: 'user.reset-password', username, sessions_ended: result.sessionsEnded })
  },
}

const disable: CliCommand = {
  words: ['user', 'disable'],
  usage: 'user disable <username>   (ends its sessions; its links answer 410)',
  async run(ctx, args) {
    const username = usernameArg(expectArgs(args, this.usage, 1).words[0]!)
    const result = await disableUser((await ctx.db()).sql, username)
    if (result === undefined) throw noSuchUser(username)
    const value = { action: 'user.disable', username, changed: result.changed, sessions_ended: result.sessionsEnded }
    ctx.report(`${result.changed ? 'disabled' : 'already disabled:'} ${username}; ${result.sessionsEnded} session(s) ended`, value)
  },
}

const enable: CliCommand = {
  words: ['user', 'enable'],
  usage: 'user enable <username>',
  async run(ctx, args) {
    const username = usernameArg(expectArgs(args, this.usage, 1).words[0]!)
    const result = await enableUser((await ctx.db()).sql, username)
    if (result === undefined) throw noSuchUser(username)
    ctx.report(`${result.changed ? 'enabled' : 'already enabled:'} ${username}`, { action: 'user.enable', username, changed: result.changed })
  },
}

const remove: CliCommand = {
  words: ['user', 'delete'],
  usage: 'user delete <username>   (as DELETE /api/v1/users/me: its links are deleted, their codes never reused)',
  async run(ctx, args) {
    const username = usernameArg(expectArgs(args, this.usage, 1).words[0]!)
    const sql = (await ctx.db()).sql
    const id = await findUserId(sql, username)
    if (id === undefined) throw noSuchUser(username)
    const codes = await deleteUser(sql, id)
    ctx.report(`deleted ${username} and ${codes.length} link(s)`, { action: 'user.delete', username, id, links_deleted: codes.length })
  },
}

export const USER_COMMANDS: CliCommand[] = [list, create, reset, disable, enable, remove]
