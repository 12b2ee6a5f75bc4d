// Runs the admin CLI as an operator would: its own process, configured by the environment,
// secrets on standard input. The test build's entry point is build/src/cli.js.
import { spawn } from 'node:child_process'
import * as assert from 'uvu/assert'
import { resolve } from 'node:path'
import { freshDataDir, startServer, type TestServer } from './server.js'
import { TEST_ENV } from './test-env.js'

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

/** The CLI against the test database: DATABASE_URL if set, else the embedded `dataDir`. */
export const admin = (dataDir: string | undefined, args: string[], input = ''): Promise<CliResult> => runCli(args, cliEnv(dataDir, TEST_ENV), input)

/** The JSON lines the CLI logged on stderr (its admin actions). */
export const adminLog = (r: CliResult): Array<Record<string, unknown>> =>
  r.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)

/**
 * A database of its own for a CLI test file: on the embedded engine a fresh DATA_DIR; on
 * PostgreSQL undefined (DATABASE_URL is the one the tests share).
 */
export const cliDataDir = async (): Promise<string | undefined> => (process.env.DATABASE_URL === undefined ? freshDataDir() : undefined)

/**
 * A service on the CLI tests' database while `use` runs. On the embedded engine only one process
 * may hold DATA_DIR, so a test runs the CLI between such calls, never during one.
 */
export async function withServer<T>(dataDir: string | undefined, use: (srv: TestServer) => Promise<T>): Promise<T> {
  const srv = await startServer(dataDir === undefined ? {} : { DATA_DIR: dataDir })
  try {
    return await use(srv)
  } finally {
    await srv.close()
  }
}

/** Asserts that `actual` has the fields of `expected` with their values (and perhaps more). */
export function assertFields(actual: Record<string, unknown> | undefined, expected: Record<string, unknown>): void {
  assert.equal(Object.fromEntries(Object.keys(expected).map((k) => [k, actual?.[k]])), expected)
}
