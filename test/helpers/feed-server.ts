// A threat feed served over HTTP for tests: its text can be changed at any time, it answers
// conditional requests (ETag) with 304, and it counts what it answered.
import { createHash } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FeedServer {
  url: string
  /** the feed's text from now on (a new ETag) */
  set(text: string): void
  /** answer every request with this status instead (e.g. 500), until set() is called */
  fail(status: number): void
  /** answer each request this many ms late from now on (a slow feed) */
  delay(ms: number): void
  /** statuses answered, in order */
  answered: number[]
  close(): Promise<void>
}

export async function startFeedServer(text: string): Promise<FeedServer> {
  let body = text
  let failing: number | undefined
  let lateMs = 0
  const answered: number[] = []
  const etag = () => `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`
  const server: Server = createServer(async (req, res) => {
    if (lateMs > 0) await new Promise((resolve) => setTimeout(resolve, lateMs))
    let status = 200
    if (failing !== undefined) status = failing
    else if (req.headers['if-none-match'] === etag()) status = 304
    answered.push(status)
    if (status === 200) res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', etag: etag() }).end(body)
    else res.writeHead(status, status === 304 ? { etag: etag() } : {}).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hosts.txt`,
    set(next) {
      body = next
      failing = undefined
    },
    fail(status) {
      failing = status
    },
    delay(ms) {
      lateMs = ms
    },
    answered,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
