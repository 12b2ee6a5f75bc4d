// A local destination for link checks: answers each path as told (200 by default; a status, a
// redirect, or never), and records every request it got (method, path, User-Agent).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export type Answer = { status: number; location?: string; headers?: Record<string, string> } | 'never'

export class Target {
  readonly requests: Array<{ method: string; path: string; userAgent: string | undefined }> = []
  readonly #answers = new Map<string, Answer>()
  readonly #hanging = new Set<ServerResponse>()
  #server: Server | undefined
  port = 0

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`
  }

  /** What `path` answers from now on. */
  answer(path: string, answer: Answer): this {
    this.#answers.set(path, answer)
    return this
  }

  async start(): Promise<this> {
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const path = req.url ?? '/'
      this.requests.push({ method: req.method ?? '', path, userAgent: req.headers['user-agent'] })
      const answer = this.#answers.get(path) ?? { status: 200 }
      if (answer === 'never') return void this.#hanging.add(res)
      res.writeHead(answer.status, { ...(answer.location === undefined ? {} : { location: answer.location }), ...answer.headers, 'content-type': 'text/plain' })
      res.end(req.method === 'HEAD' ? undefined : 'a page\n')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
    this.port = (server.address() as AddressInfo).port
    this.#server = server
    return this
  }

  /** Requests for `path` so far. */
  of(path: string): number {
    return this.requests.filter((r) => r.path === path).length
  }

  async stop(): Promise<void> {
    const server = this.#server
    if (server === undefined) return
    this.#server = undefined
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
