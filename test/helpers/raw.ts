// Raw HTTP over a socket, for protocol edges fetch cannot express (lying or chunked bodies,
// oversized headers, repeated headers).
import { connect } from 'node:net'

export interface RawResponse {
  status: number
  head: string
  body: string
  /** true when the server closed the connection */
  closed: boolean
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
      const text = Buffer.concat(chunks).toString('latin1')
      const split = text.indexOf('\r\n\r\n')
      const head = split === -1 ? text : text.slice(0, split)
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: split === -1 ? '' : text.slice(split + 4), closed })
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
        if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs))
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
