// link-service block ...: hosts that may not be link targets. A host blocks its
// subdomains too; links to it already made answer 410 at once, new ones are refused (422).
import { blockHost, listBlockedHosts, unblockHost } from '../admin/blocks.js'
import { normalizeHost } from '../links/hosts.js'
import { CliError, columns, expectArgs, type CliCommand } from './command.js'

function hostArg(input: string): string {
  const host = normalizeHost(input)
  if (host === undefined) throw new CliError(`not a host name: ${JSON.stringify(input)} (give a bare host such as example.com)`)
  return host
}

const add: CliCommand = {
  words: ['block', 'add'],
  usage: 'block add <host>   (and its subdomains)',
  async run(ctx, args) {
    const host = hostArg(expectArgs(args, this.usage, 1).words[0]!)
    const changed = await blockHost((await ctx.db()).sql, host)
    ctx.report(`${changed ? 'blocked' : 'already blocked:'} ${host}`, { action: 'block.add', host, changed })
  },
}

const remove: CliCommand = {
  words: ['block', 'remove'],
  usage: 'block remove <host>',
  async run(ctx, args) {
    const host = hostArg(expectArgs(args, this.usage, 1).words[0]!)
    const changed = await unblockHost((await ctx.db()).sql, host)
    if (!changed) throw new CliError(`not blocked: ${host}`)
    ctx.report(`unblocked ${host}`, { action: 'block.remove', host, changed })
  },
}

const list: CliCommand = {
  words: ['block', 'list'],
  usage: 'block list [--json]',
  async run(ctx, args) {
    expectArgs(args, this.usage, 0)
    const hosts = await listBlockedHosts((await ctx.db()).sql)
    const value = hosts.map((h) => ({ host: h.host, created_at: h.created_at.toISOString(), links: h.links }))
    const rows = [['HOST', 'LINKS', 'BLOCKED AT']]
    for (const h of value) rows.push([h.host, String(h.links), h.created_at])
    ctx.print(value.length === 0 ? 'no blocked hosts' : columns(rows), value)
  },
}

export const BLOCK_COMMANDS: CliCommand[] = [add, remove, list]
