// Raw HTTP over a socket, for protocol edges fetch cannot express (lying or chunked bodies,
// oversized headers, repeated headers).
import { connect } from 'node:net'
import { sleep } from './wait.js'

export interface RawResponse {
  status: number
  head: string
  body: string
  /** true when the server closed the connection */
  closed: boolean
}

/** The lines of a request head (request line, then header lines), ended as HTTP wants. */
export const requestHead = (lines: string[]): string => lines.join('\r\n') + '\r\n\r\n'

/** A response as read off the socket: status, head and body. */
function parse(chunks: Buffer[], closed: boolean): RawResponse {
  const text = Buffer.concat(chunks).toString('latin1')
  const split = text.indexOf('\r\n\r\n')
  const head = split === -1 ? text : text.slice(0, split)
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: split === -1 ? '' : text.slice(split + 4), closed }
}

/** Writes each part in turn (with an optional pause between) and reads until the server closes or idleMs passes. */
export function raw(base: string, parts: Array<string | Buffer>, opts: { pauseMs?: number; idleMs?: number } = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(base)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    const chunks: Buffer[] = []
    let closed = false
    let timer: NodeJS.Timeout | undefined
    const finish = () => {
      clearTimeout(timer)
      socket.destroy()
      resolve(parse(chunks, closed))
    }
    const idle = () => {
      clearTimeout(timer)
      timer = setTimeout(finish, opts.idleMs ?? 1500)
    }
    socket.on('data', (c) => {
      chunks.push(c)
      idle()
    })
    socket.on('end', () => {
      closed = true
      finish()
    })
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset after the response was read still counts as a close.
      if (chunks.length > 0) {
        closed = true
        finish()
      } else reject(err)
    })
    socket.on('connect', async () => {
      for (const part of parts) {
        if (socket.destroyed) break
        socket.write(part)
        if (opts.pauseMs) await sleep(opts.pauseMs)
      }
      idle()
    })
  })
}

/** The value of a header in a raw response head, or undefined. */
export function header(head: string, name: string): string | undefined {
  const line = head.split('\r\n').find((l) => l.toLowerCase().startsWith(name.toLowerCase() + ':'))
  return line?.slice(line.indexOf(':') + 1).trim()
}

export interface Streamed extends RawResponse {
  /** body bytes the client had sent when the first response byte arrived (-1: no response) */
  sentAtAnswer: number
}

/**
 * Sends `head` (which must declare Transfer-Encoding: chunked), then chunks of `chunkBytes` with a
 * pause between, stopping as soon as the server answers. `end` sends the final zero chunk.
 */
export function streamChunked(
  base: string,
  head: string,
  opts: { chunkBytes: number; maxChunks: number; pauseMs: number; end?: boolean; data?: Buffer },
): Promise<Streamed> {
  const { hostname, port } = new URL(base)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    const received: Buffer[] = []
    let sent = 0
    let sentAtAnswer = -1
    let closed = false
    let done = false
    let idle: NodeJS.Timeout | undefined
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(idle)
      socket.destroy()
      resolve({ ...parse(received, closed), sentAtAnswer })
    }
    const wait = (ms: number) => {
      clearTimeout(idle)
      idle = setTimeout(finish, ms)
    }
    socket.on('data', (c: Buffer) => {
      if (sentAtAnswer === -1) sentAtAnswer = sent
      received.push(c)
      wait(500)
    })
    socket.on('end', () => {
      closed = true
      finish()
    })
    socket.on('error', (err) => {
      if (received.length > 0) {
        closed = true
        finish()
      } else if (!done) {
        done = true
        clearTimeout(idle)
        reject(err)
      }
    })
    socket.on('connect', async () => {
      socket.write(head)
      const data = opts.data ?? Buffer.alloc(opts.chunkBytes, 0x61)
      const frame = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')])
      for (let i = 0; i < opts.maxChunks; i++) {
        if (sentAtAnswer !== -1 || socket.destroyed) break
        socket.write(frame)
        sent += data.length
        await sleep(opts.pauseMs)
      }
      if (opts.end === true && sentAtAnswer === -1 && !socket.destroyed) socket.write('0\r\n\r\n')
      if (sentAtAnswer === -1) wait(3000)
    })
  })
}

/** What became of one request on a keep-alive connection. */
export type Outcome =
  | { kind: 'answered'; status: number; head: string; body: string }
  /** the server closed (FIN) before any byte of an answer: the request was not read */
  | { kind: 'closed' }
  /** the connection was reset, or closed in the middle of an answer */
  | { kind: 'broken'; why: string }

/**
 * One keep-alive connection that sends requests one after another and reads each answer by its
 * Content-Length, telling a clean close (FIN, nothing of an answer) from a reset or a cut answer.
 */
export class KeepAlive {
  #buffer = Buffer.alloc(0)
  #waiting: ((o: Outcome) => void) | undefined
  #ended: Outcome | undefined

  private constructor(readonly socket: import('node:net').Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk])
      this.#tryAnswer()
    })
    socket.on('end', () => this.#end(this.#buffer.length === 0 ? { kind: 'closed' } : { kind: 'broken', why: 'closed mid-answer' }))
    socket.on('error', (err) => this.#end({ kind: 'broken', why: String((err as NodeJS.ErrnoException).code ?? err) }))
  }

  static open(base: string): Promise<KeepAlive> {
    const { hostname, port } = new URL(base)
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname)
      socket.once('connect', () => resolve(new KeepAlive(socket)))
      socket.once('error', reject)
    })
  }

  get ended(): boolean {
    return this.#ended !== undefined
  }

  /** Writes the parts (a pause of `pauseMs` between them) and resolves with what became of it. */
  async send(parts: string[], pauseMs = 0): Promise<Outcome> {
    if (this.#ended !== undefined) return this.#ended
    const outcome = new Promise<Outcome>((resolve) => (this.#waiting = resolve))
    for (const [i, part] of parts.entries()) {
      if (i > 0 && pauseMs > 0) await sleep(pauseMs)
      if (!this.socket.writable) break
      this.socket.write(part)
    }
    return outcome
  }

  close(): void {
    this.socket.destroy()
  }

  #tryAnswer(): void {
    const split = this.#buffer.indexOf('\r\n\r\n')
    if (split === -1 || this.#waiting === undefined) return
    const head = this.#buffer.subarray(0, split).toString('latin1')
    const length = Number(header(head, 'content-length') ?? 0)
    if (this.#buffer.length < split + 4 + length) return
    const body = this.#buffer.subarray(split + 4, split + 4 + length).toString()
    this.#buffer = this.#buffer.subarray(split + 4 + length)
    const resolve = this.#waiting
    this.#waiting = undefined
    resolve({ kind: 'answered', status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body })
  }

  #end(outcome: Outcome): void {
    this.#ended ??= outcome
    const resolve = this.#waiting
    this.#waiting = undefined
    resolve?.(this.#ended)
  }
}
