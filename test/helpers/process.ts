// The service as an operator runs it: `node server.js` in a child process, on a free port, with
// its JSON log lines parsed as they come. For what only a real process shows: WORKERS, signals,
// an exit.
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { until } from './wait.js'

const SERVER = new URL('../../src/server.js', import.meta.url).pathname

export interface Line {
  msg: string
  pid: number
  [k: string]: unknown
}

export interface ServerProcess {
  child: ChildProcess
  lines: Line[]
  port: number
  url: string
  /** the exit code, once exited */
  exited: Promise<number | null>
  /** every log line so far, for a failure's message */
  logSoFar(): string
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

/** Starts server.js with these overrides and waits until `listening` is logged `workers` times (LOG_LEVEL info or lower). */
export async function spawnServer(env: Record<string, string>, workers = 1): Promise<ServerProcess> {
  const port = await freePort()
  const lines: Line[] = []
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ARGON2_MEMORY_KIB: '64', ARGON2_ITERATIONS: '1', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  let buffered = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    const parts = buffered.split('\n')
    buffered = parts.pop()!
    for (const p of parts) if (p.trim() !== '') lines.push(JSON.parse(p) as Line)
  })
  const logSoFar = () => `log so far:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`
  try {
    await until(15_000, () => lines.filter((l) => l.msg === 'listening').length === workers, { every: 50, why: logSoFar })
  } catch (err) {
    child.kill('SIGKILL') // a start that failed leaves nothing running
    throw err
  }
  return { child, lines, port, url: `http://127.0.0.1:${port}`, exited, logSoFar }
}
