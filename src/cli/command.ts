// What every admin command gets: the service's configuration, its database (migrated), a way to
// print human text or JSON, and secrets read from standard input, never from the arguments.
import type { Config } from '../config.js'
import { DataDirInUse } from '../db/errors.js'
import { openDatabase } from '../db/open.js'
import type { Database } from '../db/types.js'
import { migrate, MIGRATIONS_DIR } from '../db/migrate.js'
import type { Logger } from '../log.js'

/** A command's refusal: printed as one line on stderr (control characters escaped), exit status 1 (or `status`). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly status = 1,
  ) {
    super(shown(message))
  }
}

// Control characters (C0, DEL, C1: ESC starts a terminal's escape sequences, and U+009B is CSI on
// some), lone surrogates, line and paragraph separators, and the bidirectional marks, embeddings,
// overrides and isolates that can make a line read otherwise than it is.
const UNSHOWABLE = /[\p{Cc}\p{Cs}\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/gu

/**
 * Text from outside (a report's details, a feed's line, a display name) as a terminal may be given
 * it: every character of UNSHOWABLE written as an escape (\x1b, \u{202e}), never sent raw. The
 * human form of every command goes through it; --json has JSON's own escapes.
 */
export function shown(text: string): string {
  return text.replace(UNSHOWABLE, (c) => {
    const code = c.codePointAt(0)!
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`
  })
}

export interface CliContext {
  config: Readonly<Config>
  /** opened (and migrated) on first use; an embedded DATA_DIR held by a running service is refused */
  db(): Promise<Database>
  /** `--json` was given */
  json: boolean
  /** human text, or (with --json) the value as one JSON document */
  print(human: string, value: unknown): void
  /** standard output itself, for streams (export) */
  stdout: NodeJS.WritableStream
  stdin: NodeJS.ReadableStream
  /** a secret: one line of standard input, or a prompt without echo on a terminal */
  readSecret(prompt: string): Promise<string>
  /** admin actions: one JSON line each, on stderr, saying what changed */
  log: Logger
  /** an admin action done: its log line ("admin", the value) and its answer (print) at once */
  report(human: string, value: { action: string } & Record<string, unknown>): void
}

/** `words` names the command ("user create"); `run` gets what follows them. */
export interface CliCommand {
  words: string[]
  usage: string
  run(ctx: CliContext, args: string[]): Promise<void>
}

export async function openMigrated(config: Readonly<Config>): Promise<Database> {
  let db: Database
  try {
    db = await openDatabase(config.databaseUrl, config.dataDir, config.dbTimeoutMs)
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    // The embedded engine is one process's: while the service holds DATA_DIR, refuse (never fork it).
    if (err instanceof DataDirInUse) {
      throw new CliError(`${message}; stop the service first, or set DATABASE_URL to use PostgreSQL`)
    }
    throw new CliError(`cannot open the database: ${message}`)
  }
  await migrate(db.sql, MIGRATIONS_DIR)
  return db
}

/** Options of the form `--name value` and flags `--name`; the rest, in order. */
export function parseArgs(args: string[], valued: string[]): { options: Map<string, string>; flags: Set<string>; rest: string[] } {
  const options = new Map<string, string>()
  const flags = new Set<string>()
  const rest: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (!arg.startsWith('--')) {
      rest.push(arg)
      continue
    }
    const eq = arg.indexOf('=')
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
    if (valued.includes(name)) {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1)
      if (value === undefined) throw new CliError(`--${name} needs a value`)
      options.set(name, value)
    } else if (eq === -1) {
      flags.add(name)
    } else {
      throw new CliError(`unknown option --${name}`)
    }
  }
  return { options, flags, rest }
}

/**
 * The arguments of a command that takes `count` words and the given `--options` (each with a
 * value); anything else is refused, so a mistyped option (or a password given as one) never passes.
 */
export function expectArgs(args: string[], usage: string, count: number, valued: string[] = []): { words: string[]; options: Map<string, string> } {
  const { options, flags, rest } = parseArgs(args, valued)
  const [flag] = flags
  if (flag !== undefined) throw new CliError(`unknown option --${flag}; usage: link-service ${usage}`)
  if (rest.length !== count) throw new CliError(`usage: link-service ${usage}`)
  return { words: rest, options }
}

/** Usernames are stored in lowercase (as registration does), so `Alice` names alice. */
export const usernameArg = (name: string): string => name.toLowerCase()

/** Rows as aligned columns, for the human form of a list; every cell shown(). */
export function columns(table: string[][]): string {
  const rows = table.map((r) => r.map(shown))
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n')
}
