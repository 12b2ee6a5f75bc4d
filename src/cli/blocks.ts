// link-service block ...: hosts that may not be link targets. A host blocks its subdomains too;
// links to it already made answer 410 at once, new ones are refused (422). Entries come from the
// operator (source 'manual') or from threat feeds (BLOCKLIST_SOURCES, `block import`).
import { resolve } from 'node:path'
import { blockHost, listBlockedHosts, MANUAL_SOURCE, unblockHost } from '../admin/blocks.js'
import { listSources, removeSource } from '../blocklist/queries.js'
import { isUrl } from '../blocklist/read-source.js'
import { refreshSource } from '../blocklist/refresh.js'
import { normalizeHost } from '../links/hosts.js'
import { CliError, columns, expectArgs, parseArgs, shown, type CliCommand } from './command.js'

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
  usage: 'block remove <host> | --source NAME   (a manual entry, or every entry of a feed)',
  async run(ctx, args) {
    const { words, options } = expectArgs(args, this.usage, args.some((a) => a.startsWith('--source')) ? 0 : 1, ['source'])
    const sql = (await ctx.db()).sql
    const source = options.get('source')
    if (source !== undefined) {
      if (source === MANUAL_SOURCE) throw new CliError('the manual entries are removed one host at a time: block remove <host>')
      const { removed, entries } = await removeSource(sql, source)
      if (!removed) throw new CliError(`no such source: ${source} (block sources lists them)`)
      ctx.report(`removed source ${source} and its ${entries} entries`, { action: 'block.remove-source', source, entries })
      return
    }
    const host = hostArg(words[0]!)
    const { removed, stillListedBy } = await unblockHost(sql, host)
    if (!removed) {
      throw new CliError(stillListedBy.length === 0 ? `not blocked: ${host}` : `${host} has no manual entry; it is listed by ${stillListedBy.join(', ')}`)
    }
    const still = stillListedBy.length === 0 ? '' : ` (still blocked: listed by ${stillListedBy.join(', ')})`
    ctx.report(`unblocked ${host}${still}`, { action: 'block.remove', host, changed: true, still_listed_by: stillListedBy })
  },
}

const list: CliCommand = {
  words: ['block', 'list'],
  usage: 'block list [--source NAME] [--json]',
  async run(ctx, args) {
    const { options } = expectArgs(args, this.usage, 0, ['source'])
    const hosts = await listBlockedHosts((await ctx.db()).sql, options.get('source'))
    const value = hosts.map((h) => ({ host: h.host, source: h.source, created_at: h.created_at.toISOString(), links: h.links }))
    const rows = [['HOST', 'SOURCE', 'LINKS', 'BLOCKED AT']]
    for (const h of value) rows.push([h.host, h.source, String(h.links), h.created_at])
    ctx.print(value.length === 0 ? 'no blocked hosts' : columns(rows), value)
  },
}

const sources: CliCommand = {
  words: ['block', 'sources'],
  usage: 'block sources [--json]   (the threat feeds: entries, last check, last error)',
  async run(ctx, args) {
    expectArgs(args, this.usage, 0)
    const rows = await listSources((await ctx.db()).sql)
    const value = rows.map((s) => ({
      name: s.name,
      location: s.location,
      entries: s.entries,
      invalid_lines: s.invalid_lines,
      checked_at: s.checked_at?.toISOString() ?? null,
      loaded_at: s.loaded_at?.toISOString() ?? null,
      failures: s.failures,
      last_error: s.last_error,
    }))
    const table = [['SOURCE', 'ENTRIES', 'INVALID', 'LOADED AT', 'LAST ERROR']]
    for (const s of value) table.push([s.name, String(s.entries), String(s.invalid_lines), s.loaded_at ?? 'never', s.last_error ?? ''])
    ctx.print(value.length === 0 ? 'no sources' : columns(table), value)
  },
}

const importFeed: CliCommand = {
  words: ['block', 'import'],
  usage: 'block import <file|url> [--source NAME] [--force]   (replaces that source\'s entries; --force even with a list cut by more than half, or mostly invalid lines)',
  async run(ctx, args) {
    const { flags, rest, options } = parseArgs(args, ['source'])
    const unknown = [...flags].find((f) => f !== 'force')
    if (unknown !== undefined) throw new CliError(`unknown option --${unknown}; usage: link-service ${this.usage}`)
    if (rest.length !== 1) throw new CliError(`usage: link-service ${this.usage}`)
    const force = flags.has('force')
    const given = rest[0]!
    const source = options.get('source') ?? given
    if (source === MANUAL_SOURCE) throw new CliError('"manual" names the operator\'s own entries; choose another --source')
    const location = isUrl(given) ? given : resolve(given)
    const result = await refreshSource((await ctx.db()).sql, source, location, { reread: true, force })
    if (result.outcome === 'failed') {
      throw new CliError(`import failed, the source's entries are unchanged: ${result.error}${result.refused === undefined || result.refused === 'too_large' ? '' : ' (--force loads it all the same)'}`)
    }
    /* c8 ignore next -- a reread is never 'unchanged' */
    if (result.outcome === 'unchanged') return
    const { load, feed } = result
    // A feed's lines are a stranger's text: shown escaped, in the JSON as in the terminal.
    const invalidSamples = feed.samples.map((s) => ({ line: s.line, text: shown(s.text) }))
    const suffixes = feed.suffixes === 0 ? '' : ` (${feed.suffixes} of them public suffixes, refused)`
    const samples = invalidSamples.map((s) => `  line ${s.line}: ${s.text}`)
    const human = [`source ${shown(source)}: ${load.entries} entries (${load.added} added, ${load.removed} removed), ${feed.invalid} invalid lines${suffixes}`, ...samples].join('\n')
    ctx.report(human, {
      action: 'block.import',
      source,
      location,
      entries: load.entries,
      added: load.added,
      removed: load.removed,
      invalid_lines: feed.invalid,
      public_suffixes: feed.suffixes,
      invalid_samples: invalidSamples,
      forced: force,
    })
  },
}

export const BLOCK_COMMANDS: CliCommand[] = [add, remove, list, sources, importFeed]
