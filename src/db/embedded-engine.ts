// The embedded engine's thread (embedded.ts, startEngine): PGlite and the socket server it is
// reached through. PGlite runs each query on the thread that holds it; here that is not the
// thread that answers requests, so a flush's statements or a cold read's do not stop redirects,
// and a second core does the database's work, as PostgreSQL's own processes would.
import { parentPort, workerData } from 'node:worker_threads'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { OwnerOnlyFS } from './owner-only-fs.js'

export interface EngineData {
  dataDir: string
  socketPath: string
  startParams: string[]
}

/** What the thread tells its parent: ready, or why it could not start (an Emscripten error is no Error: its errno is sent). */
export type EngineMessage = { ready: true } | { failed: { message: string | undefined; errno: number | undefined } } | { closed: true }

const { dataDir, socketPath, startParams } = workerData as EngineData
const port = parentPort!
let pglite: PGlite | undefined
let server: PGLiteSocketServer | undefined
try {
  pglite = await PGlite.create({ fs: new OwnerOnlyFS(dataDir), startParams: [...PGlite.defaultStartParams, ...startParams] })
  // PGlite runs one query at a time; one connection keeps transactions from interleaving.
  server = new PGLiteSocketServer({ db: pglite, path: socketPath, maxConnections: 1 })
  await server.start()
  port.postMessage({ ready: true } satisfies EngineMessage)
} catch (err) {
  await pglite?.close().catch(() => {})
  const errno = (err as { errno?: unknown } | null)?.errno
  port.postMessage({ failed: { message: err instanceof Error ? err.message : undefined, errno: typeof errno === 'number' ? errno : undefined } } satisfies EngineMessage)
}

// Asked to close: the socket server, then the engine (which writes its files out).
port.once('message', async () => {
  await server?.stop()
  await pglite?.close()
  port.postMessage({ closed: true } satisfies EngineMessage)
})
