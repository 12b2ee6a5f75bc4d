// The embedded PGlite engine, served on a private Unix socket so that the same driver and the
// same SQL run on it as on PostgreSQL, from a thread of its own (embedded-engine.ts); its data
// directory locked against a second process (docs/decisions.md, the embedded database).
import { chmod, lstat, mkdir, mkdtemp, readdir, realpath, rm } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { Worker } from 'node:worker_threads'
import postgres from 'postgres'
import type { EngineData, EngineMessage } from './embedded-engine.js'
import { DataDirInUse } from './errors.js'
import type { Database } from './types.js'

/** `options`: the driver options every connection shares (statement counting, notices, the name). */
export async function openEmbedded(dataDir: string, options: Pick<postgres.Options<Record<string, never>>, 'onnotice' | 'connection' | 'debug'>, statements: () => number): Promise<Database> {
  baselineWasmOnly()
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  // The engine's file system does not follow a symbolic link at its root: DATA_DIR may be one.
  dataDir = await realpath(dataDir)
  const unlock = await lockDataDir(dataDir)
  // The files hold the password hashes: they are for this user alone. The umask covers what this
  // process creates (PGlite's directories among it); PGlite's engine then sets each new file's mode
  // itself (0666, by a chmod no umask limits), so its chmod is masked too (OwnerOnlyFS). Files an
  // earlier release left open are closed at start.
  process.umask(0o077)
  await restrictToOwner(dataDir)
  // mkdtemp makes a 0700 directory: only this user can reach the unauthenticated socket.
  const socketDir = await mkdtemp(join(tmpdir(), 'link-service-'))
  const socketPath = join(socketDir, '.s.PGSQL.5432')
  let engine: Engine
  try {
    if (!existsSync(join(dataDir, 'PG_VERSION'))) await bootstrapInWorker(dataDir)
    engine = await startEngine({ dataDir, socketPath, startParams: ENGINE_SETTINGS }, dataDir)
  } catch (err) {
    // A failed start (a damaged directory, say) must not leave the directory locked.
    await rm(socketDir, { recursive: true, force: true })
    await unlock()
    throw engineError(err, dataDir)
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
      await engine.close()
      await rm(socketDir, { recursive: true, force: true })
      await unlock()
    },
  }
}

interface Engine {
  close(): Promise<void>
}

/**
 * The engine and its socket server, on a thread of their own (embedded-engine.ts): the queries
 * run beside the event loop, not on it. Resolves once the socket answers.
 */
async function startEngine(data: EngineData, dataDir: string): Promise<Engine> {
  const worker = new Worker(new URL('./embedded-engine.js', import.meta.url), { workerData: data })
  const next = () =>
    new Promise<EngineMessage>((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`the embedded engine's thread ended with code ${code}`))
      worker.once('error', reject)
      worker.once('exit', onExit)
      worker.once('message', (m: EngineMessage) => {
        worker.off('error', reject)
        worker.off('exit', onExit)
        resolve(m)
      })
    })
  const started = await next().catch(async (err: unknown) => {
    await worker.terminate()
    throw engineError(err, dataDir)
  })
  if ('failed' in started) {
    await worker.terminate()
    throw engineError(started.failed.message === undefined ? { errno: started.failed.errno } : new Error(started.failed.message), dataDir)
  }
  // Past its start, a failure of the thread shows as the socket gone: every query fails as with
  // a PostgreSQL that went away (503, /healthz says so). The error itself is printed as a warning.
  worker.on('error', (err) => process.emitWarning(`the embedded engine's thread failed: ${String(err)}`))
  return {
    async close() {
      const closed = next()
      worker.postMessage('close')
      await closed
      await worker.terminate()
    },
  }
}

/**
 * PGlite's settings for one process with one connection (docs/decisions.md, the embedded
 * engine's memory). Its own defaults are a server's: 128 MB of shared buffers inside the WASM
 * heap, which only grows, on top of the page cache that holds the same files anyway.
 */
const ENGINE_SETTINGS = ['shared_buffers=16MB', 'max_connections=5'].flatMap((setting) => ['-c', setting])

/**
 * V8 compiles PostgreSQL's WebAssembly with its baseline compiler only: its optimising tier keeps
 * a second copy of the hot code, hundreds of MB after the migrations of a fresh directory, for a
 * speed that a service waiting on its socket and its files barely sees (docs/decisions.md has
 * the figures). A WebAssembly flag on node's command line (`node --no-liftoff-only ...`) wins.
 */
export const WASM_FLAG = '--liftoff-only'
export const wasmFlagGiven = (execArgv: readonly string[]): boolean => execArgv.some((arg) => /liftoff|wasm/.test(arg))

/** Node 20 reads the flag when a module compiles, so it is set before PGlite's is; later lines
 *  read it only at start, so server.ts starts the process again with it (restartWithWasmFlag). */
function baselineWasmOnly(): void {
  if (!wasmFlagGiven(process.execArgv)) setFlagsFromString(WASM_FLAG)
}

/**
 * The service's process, started again in place (the same pid) with WASM_FLAG, where Node can
 * (process.execve, Node 22.15 and later); it returns only where it cannot. Only for a process
 * that is the service alone (server.ts), before it has opened anything.
 */
export function restartWithWasmFlag(): void {
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve
  if (execve === undefined || wasmFlagGiven(process.execArgv)) return
  execve(process.execPath, [process.execPath, WASM_FLAG, ...process.execArgv, ...process.argv.slice(1)], process.env)
}

/**
 * A fresh directory is initialised (initdb) in a short-lived worker thread: initdb grows its
 * WASM heap to about 600 MB, which a heap never gives back, and the thread takes it along when
 * it ends, where in this thread it stayed until a full collection that may not come.
 */
async function bootstrapInWorker(dataDir: string): Promise<void> {
  const worker = new Worker(new URL('./embedded-bootstrap.js', import.meta.url), { workerData: { dataDir } })
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve())
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`the embedded engine's initialisation ended with code ${code}`)))
  })
  await worker.terminate()
}

// The engine's file system errors are Emscripten's ErrnoError: no Error, no message, its own
// numbers (the common ones here, from Emscripten's ERRNO_CODES).
const EMSCRIPTEN_ERRNO: Record<number, string> = { 2: 'EACCES', 20: 'EEXIST', 28: 'EINVAL', 29: 'EIO', 31: 'EISDIR', 32: 'ELOOP', 44: 'ENOENT', 51: 'ENOSPC', 54: 'ENOTDIR', 55: 'ENOTEMPTY', 63: 'EPERM', 69: 'EROFS' }

/** An Error that says what failed, whatever the engine threw. */
function engineError(err: unknown, dataDir: string): Error {
  if (err instanceof Error) return err
  const errno = (err as { errno?: unknown } | null)?.errno
  const code = typeof errno === 'number' ? EMSCRIPTEN_ERRNO[errno] ?? `errno ${errno}` : String(err)
  return new Error(`the embedded engine failed on a file in ${dataDir}: ${code}`)
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
