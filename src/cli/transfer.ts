// `export`, `import` and `migrate`: the whole state of an installation as one JSON Lines
// stream (src/admin/transfer-format.ts), and an embedded install moved into PostgreSQL in one step.
import { existsSync } from 'node:fs'
import { open, rm } from 'node:fs/promises'
import { once } from 'node:events'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { exportDatabase } from '../admin/export.js'
import { importDatabase } from '../admin/import.js'
import { TransferError } from '../admin/transfer-format.js'
import { CliError, openMigrated, parseArgs, type CliCommand, type CliContext } from './command.js'

const WRITE_CHUNK_CHARS = 64 * 1024

/** Lines gathered into chunks of about 64 KiB, written as the stream takes them (backpressure). */
function lineWriter(out: NodeJS.WritableStream): { line(text: string): Promise<void>; end(): Promise<void> } {
  let pending = ''
  const write = async () => {
    const chunk = pending
    pending = ''
    if (!out.write(chunk)) await once(out, 'drain')
  }
  return {
    async line(text) {
      pending += text + '\n'
      if (pending.length >= WRITE_CHUNK_CHARS) await write()
    },
    end: () => (pending === '' ? Promise.resolve() : write()),
  }
}

/** Bad input is the operator's to fix: one line, exit 1, like any refusal. */
async function transferring<T>(work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (err) {
    throw err instanceof TransferError ? new CliError(err.message) : err
  }
}

function summary(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([table, n]) => `${table} ${n}`)
    .join(', ')
}

const exportCommand: CliCommand = {
  words: ['export'],
  usage: 'export [--sessions] [--file F]   (all data as JSON Lines; on stdout by default)',
  async run(ctx, args) {
    const { options, flags, rest } = parseArgs(args, ['file'])
    const unknown = [...flags].filter((f) => f !== 'sessions').map((f) => `--${f}`)[0] ?? rest[0]
    if (unknown !== undefined) throw new CliError(`export: unexpected argument ${unknown}`)
    const file = options.get('file')
    const sessions = flags.has('sessions')
    if (file === undefined) {
      const out = lineWriter(ctx.stdout)
      const counts = await exportDatabase((await ctx.db()).sql, { sessions }, out.line)
      await out.end()
      // Standard output is the export itself: the summary goes to the log line only.
      ctx.log.info('admin', { action: 'export', counts, to: 'stdout' })
      return
    }
    // The export holds password hashes: for this user alone, like the database (docs/deploy.md).
    const handle = await open(file, 'w', 0o600)
    let counts: Record<string, number>
    try {
      await handle.chmod(0o600)
      const stream = handle.createWriteStream()
      const out = lineWriter(stream)
      counts = await exportDatabase((await ctx.db()).sql, { sessions }, out.line)
      await out.end()
      stream.end()
      await once(stream, 'close')
    } catch (err) {
      await handle.close().catch(() => {})
      // A partial file would only be refused on import (no last line); leave none.
      await rm(file, { force: true })
      throw err
    }
    ctx.report(`exported to ${file}: ${summary(counts)}`, { action: 'export', counts, to: file })
  },
}

async function readLines(input: NodeJS.ReadableStream, line: (text: string) => Promise<void>): Promise<void> {
  for await (const text of createInterface({ input, crlfDelay: Infinity })) await line(text)
}

const importCommand: CliCommand = {
  words: ['import'],
  usage: 'import [--file F]   (an export, from stdin by default, into an empty database)',
  async run(ctx, args) {
    const { options, flags, rest } = parseArgs(args, ['file'])
    const unknown = [...flags].map((f) => `--${f}`)[0] ?? rest[0]
    if (unknown !== undefined) throw new CliError(`import: unexpected argument ${unknown}`)
    const file = options.get('file')
    // Opened first: a missing file is refused before the database is touched.
    const handle = file === undefined ? undefined : await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
      throw new CliError(`cannot read ${file}: ${err.code ?? err.message}`)
    })
    try {
      const input = handle?.createReadStream() ?? ctx.stdin
      const db = await ctx.db()
      const counts = await transferring(importDatabase(db.sql, (line) => readLines(input, line)))
      ctx.report(`imported: ${summary(counts)}`, { action: 'import', counts, from: file ?? 'stdin' })
    } finally {
      await handle?.close()
    }
  },
}

const migrateCommand: CliCommand = {
  words: ['migrate'],
  usage: 'migrate --from-data-dir DIR   (the embedded database in DIR into the empty DATABASE_URL)',
  async run(ctx, args) {
    const { options, flags, rest } = parseArgs(args, ['from-data-dir'])
    const unknown = [...flags].map((f) => `--${f}`)[0] ?? rest[0]
    if (unknown !== undefined) throw new CliError(`migrate: unexpected argument ${unknown}`)
    const from = options.get('from-data-dir')
    if (from === undefined) throw new CliError('migrate needs --from-data-dir DIR: the embedded database to move')
    if (ctx.config.databaseUrl === undefined) throw new CliError('migrate moves into PostgreSQL: set DATABASE_URL to the (empty) target database')
    // Opening a directory that holds no database would create an empty one and move nothing.
    if (!existsSync(join(from, 'PG_VERSION'))) throw new CliError(`${from} holds no embedded database (no PG_VERSION)`)
    await migrateFrom(ctx, from)
  },
}

async function migrateFrom(ctx: CliContext, from: string): Promise<void> {
  // Takes DATA_DIR's lock: refused while a service runs there, and none can start meanwhile.
  const source = await openMigrated({ ...ctx.config, databaseUrl: undefined, dataDir: from })
  try {
    const target = await ctx.db()
    // Sessions too: a move, not a file left behind; logged-in users stay logged in.
    const counts = await transferring(importDatabase(target.sql, (line) => exportDatabase(source.sql, { sessions: true }, line).then(() => {})))
    ctx.report(`migrated ${from} into DATABASE_URL: ${summary(counts)}`, { action: 'migrate', counts, from })
  } finally {
    await source.close()
  }
}

export const TRANSFER_COMMANDS: CliCommand[] = [exportCommand, importCommand, migrateCommand]
