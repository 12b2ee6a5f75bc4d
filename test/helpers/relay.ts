// A TCP relay between the service and PostgreSQL, for tests that take the database away:
// cut() closes every connection (the service sees resets), pause() silently stops forwarding on
// every connection, new ones too
// (a network that drops packets: nothing closes, nothing arrives).
import { connect, createServer, type Server, type Socket } from 'node:net'
import { Transform } from 'node:stream'

export class Relay {
  server: Server | undefined
  readonly pairs = new Set<[Socket, Socket]>()
  readonly filters = new Map<Socket, Transform>()
  port = 0
  closing = false
  /** the first answer from the database that contains these bytes is dropped, and its connection reset */
  #cutAt: Buffer | undefined
  /** what the client gets instead of that answer, before the close */
  #lastWords: Buffer | undefined
  #paused = false

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
      // Answers pass through a filter that can drop one and reset its connection (cutAtAnswer).
      const answers = new Transform({
        transform: (chunk: Buffer, _encoding, done) => {
          if (this.#cutAt === undefined || !chunk.includes(this.#cutAt)) return done(null, chunk)
          this.#cutAt = undefined
          if (this.#lastWords === undefined) client.destroy()
          else client.end(this.#lastWords)
          done()
        },
      })
      this.filters.set(upstream, answers)
      upstream.once('close', () => this.filters.delete(upstream))
      answers.pipe(client)
      // While paused, a new connection is silent too (the database looks gone, not busy).
      if (!this.#paused) client.pipe(upstream).pipe(answers)
    })
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve))
    this.port = (this.server.address() as { port: number }).port
  }

  /**
   * The next answer of the database that contains `text` is lost, and its connection reset; or,
   * given `lastWords`, closed after the client got those bytes instead (terminatedByAdministrator).
   */
  cutAtAnswer(text: string, lastWords?: Buffer): void {
    this.#cutAt = Buffer.from(text)
    this.#lastWords = lastWords
  }

  pause(): void {
    this.#paused = true
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream)
      upstream.unpipe(this.filters.get(upstream))
      client.pause()
      upstream.pause()
    }
  }

  resume(): void {
    this.#paused = false
    for (const [client, upstream] of this.pairs) client.pipe(upstream).pipe(this.filters.get(upstream)!)
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

/** The ErrorResponse a backend sends before it closes when pg_terminate_backend ends it. */
export function terminatedByAdministrator(): Buffer {
  const fields = Buffer.from(
    ['SFATAL', 'VFATAL', 'C57P01', 'Mterminating connection due to administrator command'].map((f) => `${f}\0`).join('') + '\0',
  )
  const header = Buffer.alloc(5)
  header.write('E', 0)
  header.writeInt32BE(4 + fields.length, 1)
  return Buffer.concat([header, fields])
}
