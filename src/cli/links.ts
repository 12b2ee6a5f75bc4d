// link-service link ...: every account's links, and an operator's stop on one.
import { disableLink, enableLink, listAllLinks } from '../admin/links.js'
import { isShortCode } from '../links/short-code.js'
import { CliError, columns, expectArgs, usernameArg, type CliCommand } from './command.js'

const noSuchLink = (code: string) => new CliError(`no such link: ${code}`)

/** The code of a live link, checked for shape before the database is asked. */
function codeArg(code: string): string {
  if (!isShortCode(code)) throw noSuchLink(code)
  return code
}

const list: CliCommand = {
  words: ['link', 'list'],
  usage: 'link list [--user NAME] [--json]',
  async run(ctx, args) {
    const { options } = expectArgs(args, this.usage, 0, ['user'])
    const user = options.get('user')
    const links = await listAllLinks((await ctx.db()).sql, user === undefined ? undefined : usernameArg(user))
    const value = links.map((l) => ({
      code: l.code,
      username: l.username,
      url: l.url,
      created_at: l.created_at.toISOString(),
      expires_at: l.expires_at?.toISOString() ?? null,
      visits: l.visits,
      // the link itself; owner_disabled, host_blocked, suspended and flagged are the other reasons /r/{code} answers 410
      disabled: l.disabled_at !== null,
      disabled_at: l.disabled_at?.toISOString() ?? null,
      disabled_reason: l.disabled_reason,
      owner_disabled: l.owner_disabled,
      host_blocked: l.host_blocked,
      suspended: l.suspended,
      flagged: l.flagged,
    }))
    const state = (l: (typeof value)[number]) =>
      [l.disabled ? 'disabled' : '', l.owner_disabled ? 'owner-disabled' : '', l.host_blocked ? 'host-blocked' : '', l.suspended ? 'suspended' : '', l.flagged ? 'flagged' : ''].filter((s) => s !== '').join(',') || 'active'
    const rows = [['CODE', 'USER', 'STATE', 'VISITS', 'URL']]
    for (const l of value) rows.push([l.code, l.username, state(l), String(l.visits), l.url])
    ctx.print(value.length === 0 ? 'no links' : columns(rows), value)
  },
}

const disable: CliCommand = {
  words: ['link', 'disable'],
  usage: 'link disable <code> [--reason TEXT]   (it answers 410; its owner can delete it, not change it)',
  async run(ctx, args) {
    const { words, options } = expectArgs(args, this.usage, 1, ['reason'])
    const code = codeArg(words[0]!)
    const reason = options.get('reason') ?? null
    const result = await disableLink((await ctx.db()).sql, code, reason)
    if (result === undefined) throw noSuchLink(code)
    ctx.report(`${result.changed ? 'disabled' : 'already disabled:'} ${code}`, { action: 'link.disable', code, reason, changed: result.changed })
  },
}

const enable: CliCommand = {
  words: ['link', 'enable'],
  usage: 'link enable <code>',
  async run(ctx, args) {
    const code = codeArg(expectArgs(args, this.usage, 1).words[0]!)
    const result = await enableLink((await ctx.db()).sql, code)
    if (result === undefined) throw noSuchLink(code)
    ctx.report(`${result.changed ? 'enabled' : 'already enabled:'} ${code}`, { action: 'link.enable', code, changed: result.changed })
  },
}

export const LINK_COMMANDS: CliCommand[] = [list, disable, enable]
