// A TCP relay between the service and PostgreSQL, for tests that take the database away:
// cut() closes every connection (the service sees resets), pause() silently stops forwarding
// (a network that drops packets: nothing closes, nothing arrives).
import { connect, createServer, type Server, type Socket } from 'node:net'

export class Relay {
  server: Server | undefined
  readonly pairs = new Set<[Socket, Socket]>()
  port = 0
  closing = false

  constructor(
    readonly host: string,
    readonly targetPort: number,
  ) {}

  /** A relay to the database of a PostgreSQL URL, and that URL rewritten to go through it. */
  static async to(databaseUrl: string): Promise<{ relay: Relay; url: string }> {
    const target = new URL(databaseUrl)
    const relay = new Relay(target.hostname, Number(target.port || 5432))
    await relay.open()
    target.host = `127.0.0.1:${relay.port}`
    return { relay, url: target.toString() }
  }

  async open(): Promise<void> {
    this.closing = false
    this.server = createServer((client) => {
      if (this.closing) return void client.destroy()
      const upstream = connect(this.targetPort, this.host)
      const pair: [Socket, Socket] = [client, upstream]
      this.pairs.add(pair)
      for (const s of pair) {
        // One side gone takes the other with it, so that no half-closed socket outlives its pair.
        s.on('close', () => {
          this.pairs.delete(pair)
          for (const other of pair) other.destroy()
        })
        s.on('error', () => {})
      }
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve))
    this.port = (this.server.address() as { port: number }).port
  }

  pause(): void {
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream)
      upstream.unpipe(client)
      client.pause()
      upstream.pause()
    }
  }

  resume(): void {
    for (const [client, upstream] of this.pairs) client.pipe(upstream).pipe(client)
  }

  /** Resets every open connection, but keeps accepting new ones (a database that restarts at once). */
  drop(): void {
    for (const pair of this.pairs) for (const s of pair) s.destroy()
  }

  async cut(): Promise<void> {
    // A client still reconnecting must not hold the close open.
    this.closing = true
    this.drop()
    await new Promise<void>((resolve) => this.server!.close(() => resolve()))
  }
}
