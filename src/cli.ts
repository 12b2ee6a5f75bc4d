#!/usr/bin/env node
// Entry point of the admin CLI: `node dist/cli.js <command> ...`, installed as the `link-service`
// bin. Same configuration as the service (DATABASE_URL or DATA_DIR); human text by default, JSON
// with --json; any failure is one line on stderr and a non-zero exit status.
import { createInterface } from 'node:readline'
import { BLOCK_COMMANDS } from './cli/blocks.js'
import { CliError, openMigrated, type CliCommand, type CliContext } from './cli/command.js'
import { LINK_COMMANDS } from './cli/links.js'
import { REPORT_COMMANDS } from './cli/reports.js'
import { TRANSFER_COMMANDS } from './cli/transfer.js'
import { USER_COMMANDS } from './cli/users.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import type { Database } from './db/types.js'
import { createLogger } from './log.js'

const COMMANDS: CliCommand[] = [...USER_COMMANDS, ...LINK_COMMANDS, ...BLOCK_COMMANDS, ...REPORT_COMMANDS, ...TRANSFER_COMMANDS]

function usage(): string {
  return ['usage: link-service <command> [--json]', ...COMMANDS.map((c) => `  link-service ${c.usage}`)].join('\n')
}

/** The command whose words start `argv`, the longest such. */
function findCommand(argv: string[]): { command: CliCommand; args: string[] } | undefined {
  let best: CliCommand | undefined
  for (const c of COMMANDS) {
    if (c.words.every((w, i) => argv[i] === w) && (best === undefined || c.words.length > best.words.length)) best = c
  }
  return best === undefined ? undefined : { command: best, args: argv.slice(best.words.length) }
}

function readSecret(prompt: string): Promise<string> {
  const stdin = process.stdin
  return new Promise((resolve, reject) => {
    const terminal = stdin.isTTY === true
    const rl = createInterface({ input: stdin, output: terminal ? process.stderr : undefined, terminal })
    let answered = false
    if (terminal) {
      process.stderr.write(prompt)
      // Echo nothing while the secret is typed.
      ;(rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = () => {}
    }
    rl.once('line', (line) => {
      answered = true
      if (terminal) process.stderr.write('\n')
      rl.close()
      resolve(line)
    })
    rl.once('close', () => {
      if (!answered) reject(new CliError('expected a password on standard input'))
    })
  })
}

async function runCli(argv: string[], config: Readonly<Config>): Promise<void> {
  const json = argv.includes('--json')
  const words = argv.filter((a) => a !== '--json')
  if (words.length === 0 || words[0] === 'help' || words[0] === '--help') {
    process.stdout.write(usage() + '\n')
    if (words.length === 0) throw new CliError('no command given')
    return
  }
  const found = findCommand(words)
  if (found === undefined) throw new CliError(`unknown command: ${words.slice(0, 2).join(' ')} (link-service help lists them)`)
  let db: Database | undefined
  const ctx: CliContext = {
    config,
    json,
    db: async () => (db ??= await openMigrated(config)),
    print: (human, value) => process.stdout.write(json ? JSON.stringify(value) + '\n' : human === '' ? '' : human + '\n'),
    stdout: process.stdout,
    stdin: process.stdin,
    readSecret,
    log: createLogger('info', (text) => process.stderr.write(text)),
    report(human, value) {
      this.log.info('admin', value)
      this.print(human, value)
    },
  }
  try {
    await found.command.run(ctx, found.args)
  } finally {
    await db?.close()
  }
}

async function main(): Promise<void> {
  try {
    await runCli(process.argv.slice(2), loadConfig())
  } catch (err) {
    const message = err instanceof CliError ? err.message : err instanceof ConfigError ? `configuration error: ${err.message}` : `failed: ${err instanceof Error ? err.message : String(err)}`
    process.stderr.write(`link-service: ${message}\n`)
    process.exitCode = err instanceof CliError ? err.status : err instanceof ConfigError ? 78 : 1
  }
}

await main()
