// The service as a child process (`node server.js`), for tests of signals, exits and crashes:
// its JSON log lines parsed as they arrive.
import { spawn, type ChildProcess } from 'node:child_process'

const SERVER = new URL('../../src/server.js', import.meta.url).pathname

export interface Run {
  child: ChildProcess
  lines: Array<Record<string, unknown>>
  stderr: string
  exit: Promise<number | null>
}

export function run(env: Record<string, string>): Run {
  const child = spawn(process.execPath, [SERVER], {
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', ARGON2_MEMORY_KIB: '8', ARGON2_ITERATIONS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const r: Run = { child, lines: [], stderr: '', exit: new Promise((resolve) => child.once('exit', (code) => resolve(code))) }
  let buffered = ''
  child.stdout!.on('data', (c: Buffer) => {
    buffered += c.toString()
    const parts = buffered.split('\n')
    buffered = parts.pop()!
    for (const p of parts) if (p.trim() !== '') r.lines.push(JSON.parse(p) as Record<string, unknown>)
  })
  child.stderr!.on('data', (c: Buffer) => (r.stderr += c.toString()))
  return r
}

