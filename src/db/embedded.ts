// The embedded PGlite engine, served on a private Unix socket so that the same driver and the
// same SQL run on it as on PostgreSQL; its data directory locked against a second process
// (docs/decisions.md, the embedded database).
import { chmod, lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import postgres from 'postgres'
import { DataDirInUse } from './errors.js'
import type { Database } from './types.js'

/** `options`: the driver options every connection shares (statement counting, notices, the name). */
export async function openEmbedded(dataDir: string, options: Pick<postgres.Options<Record<string, never>>, 'onnotice' | 'connection' | 'debug'>, statements: () => number): Promise<Database> {
  // Loaded only when needed: the WASM build is large and a real deployment never touches it.
  const { PGlite } = await import('@electric-sql/pglite')
  const { NodeFS } = await import('@electric-sql/pglite/nodefs')
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket')
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const unlock = await lockDataDir(dataDir)
  // The files hold the password hashes: they are for this user alone. The umask covers what this
  // process creates (PGlite's directories among it); PGlite's engine then sets each new file's mode
  // itself (0666, by a chmod no umask limits), so its chmod is masked too (OwnerOnlyFS). Files an
  // earlier release left open are closed at start.
  process.umask(0o077)
  await restrictToOwner(dataDir)
  class OwnerOnlyFS extends NodeFS {
    override async init(...args: Parameters<InstanceType<typeof NodeFS>['init']>) {
      const { emscriptenOpts } = await super.init(...args)
      const maskChmod = (mod: { FS: unknown }) => {
        const fs = mod.FS as { doChmod: (stream: unknown, node: unknown, mode: number, dontFollow: boolean) => void }
        const doChmod = fs.doChmod
        fs.doChmod = (stream, node, mode, dontFollow) => doChmod.call(fs, stream, node, mode & ~0o077, dontFollow)
      }
      return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), maskChmod] } }
    }
  }
  let pglite: Awaited<ReturnType<typeof PGlite.create>> | undefined
  let server: InstanceType<typeof PGLiteSocketServer>
  // mkdtemp makes a 0700 directory: only this user can reach the unauthenticated socket.
  const socketDir = await mkdtemp(join(tmpdir(), 'link-service-'))
  const socketPath = join(socketDir, '.s.PGSQL.5432')
  try {
    pglite = await PGlite.create({ fs: new OwnerOnlyFS(dataDir) })
    server = new PGLiteSocketServer({ db: pglite, path: socketPath, maxConnections: 1 })
    await server.start()
  } catch (err) {
    // A failed start (a damaged directory, say) must not leave the directory locked.
    await pglite?.close().catch(() => {})
    await rm(socketDir, { recursive: true, force: true })
    await unlock()
    throw err
  }
  // PGlite runs one query at a time; one connection keeps transactions from interleaving.
  const sql = postgres({ ...options, path: socketPath, max: 1, user: 'postgres', database: 'postgres' })
  return {
    sql,
    embedded: true,
    url: undefined,
    poolMax: 1,
    statements,
    async close(timeout = 5) {
      await sql.end({ timeout })
      await server.stop()
      await pglite.close()
      await rm(socketDir, { recursive: true, force: true })
      await unlock()
    },
  }
}

/** Takes every permission from group and others, under `path` (symbolic links left alone). */
async function restrictToOwner(path: string): Promise<void> {
  const stat = await lstat(path)
  if (stat.isSymbolicLink()) return
  if ((stat.mode & 0o077) !== 0) await chmod(path, stat.mode & 0o700)
  if (stat.isDirectory()) await Promise.all((await readdir(path)).map((name) => restrictToOwner(join(path, name))))
}

const LOCK_SOCKET = 'link-service.lock'
/** Lock sockets this process holds: a second open of one directory in-process is refused too. */
const held = new Set<string>()

/**
 * PGlite does not lock its directory, and two processes on one directory would corrupt it. The
 * lock is a Unix socket in DATA_DIR, listened on by the holder: it is alive exactly as long as
 * its holder, whatever pids and pid namespaces say (containers sharing a volume). A socket file
 * that nobody answers on was left by a holder that is gone, and is taken over.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const path = shortestPath(join(dataDir, LOCK_SOCKET))
  if (held.has(path)) throw new DataDirInUse(`DATA_DIR ${dataDir} is already open in this process`)
  for (let attempt = 0; ; attempt++) {
    const server = createServer((client) => client.destroy())
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(path, resolve)
      })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt > 0) throw err
      const holder = await probe(path)
      if (holder !== 'gone') throw new DataDirInUse(`DATA_DIR ${dataDir} is in use by another running link service (${holder})`)
      await rm(path, { force: true })
      continue
    }
    server.unref()
    held.add(path)
    return async () => {
      held.delete(path)
      // libuv unlinks the path as it closes (before the fd, so a successor's socket is never
      // the one removed); removing it again here could remove a successor's.
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** Whether anyone answers on the lock socket: 'gone' only when that is certain. */
function probe(path: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = createConnection(path)
    socket.setTimeout(2_000, () => {
      socket.destroy()
      resolve('its lock socket does not answer, but is not refused either')
    })
    socket.once('connect', () => {
      socket.destroy()
      resolve('its lock socket answers')
    })
    socket.once('error', (err: NodeJS.ErrnoException) => {
      resolve(err.code === 'ECONNREFUSED' || err.code === 'ENOENT' ? 'gone' : `its lock socket: ${err.code ?? err.message}`)
    })
  })
}

/** A Unix socket's path is limited to about 100 bytes: the relative spelling may fit where the absolute does not. */
function shortestPath(absolute: string): string {
  const relativePath = relative(process.cwd(), absolute)
  const path = relativePath.length < absolute.length ? relativePath : absolute
  if (Buffer.byteLength(path) > 100) throw new Error(`DATA_DIR is too long a path for its lock socket: ${absolute} (at most 100 bytes)`)
  return path
}
