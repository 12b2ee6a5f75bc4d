// Runs the admin CLI as an operator would: its own process, configured by the environment,
// secrets on standard input. The test build's entry point is build/src/cli.js.
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'

const CLI = resolve('build/src/cli.js')

export interface CliResult {
  status: number | null
  stdout: string
  stderr: string
}

/**
 * `env` is the whole configuration (DATABASE_URL or DATA_DIR, ARGON2_*...): nothing of this
 * process's environment but PATH, HOME and c8's NODE_V8_COVERAGE leaks in, so a test says what the CLI sees.
 */
export function runCli(args: string[], env: Record<string, string | undefined>, input = ''): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      // NODE_V8_COVERAGE: c8 counts what the CLI runs too.
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s))
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s))
    child.once('error', fail)
    child.once('close', (status) => done({ status, stdout, stderr }))
    child.stdin.end(input)
  })
}

/** The CLI's configuration for the database the tests use: DATABASE_URL if set, else this directory. */
export function cliEnv(dataDir: string | undefined, extra: Record<string, string> = {}): Record<string, string | undefined> {
  return process.env.DATABASE_URL !== undefined
    ? { DATABASE_URL: process.env.DATABASE_URL, ...extra }
    : { DATA_DIR: dataDir, ...extra }
}
