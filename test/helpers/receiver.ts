// A local webhook receiver: records every request (headers and body), answers `status` (200 by
// default), and can be stopped and started again on the same port to play an endpoint that is down.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  /** the parsed body */
  event: { type: string; timestamp: string; data: Record<string, any> }
  at: number
}

export class Receiver {
  readonly received: Received[] = []
  status = 200
  port = 0
  #server: Server | undefined

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString()
        if (this.status >= 200 && this.status < 300) this.received.push({ headers: req.headers, body, event: JSON.parse(body), at: Date.now() })
        res.writeHead(this.status).end()
      })
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => resolve())
    })
    this.port = (server.address() as AddressInfo).port
    this.#server = server
    return this
  }

  async stop(): Promise<void> {
    const server = this.#server
    this.#server = undefined
    if (server === undefined) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  /** Events of this type received (2xx answered), in arrival order. */
  of(type: string): Received[] {
    return this.received.filter((r) => r.event.type === type)
  }
}
