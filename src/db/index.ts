// The one `postgres` client: a real PostgreSQL at DATABASE_URL, or an embedded PGlite served on a
// private Unix socket so that the same driver and the same SQL run on both (design card).
import { randomBytes } from 'node:crypto'
import { link, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'

export type Sql = postgres.Sql<Record<string, never>>
export type Tx = postgres.TransactionSql<Record<string, never>>

export interface Database {
  sql: Sql
  /** true for the embedded PGlite default: one process, one connection */
  embedded: boolean
  /** the PostgreSQL URL, when there is a real server (for LISTEN and other nodes) */
  url: string | undefined
  close(timeoutSeconds?: number): Promise<void>
}

const common = {
  onnotice: () => {},
  // The name an operator sees in pg_stat_activity.
  connection: { application_name: 'link-service' },
} as const

export async function openDatabase(databaseUrl: string | undefined, dataDir: string): Promise<Database> {
  if (databaseUrl !== undefined) {
    const sql = postgres(databaseUrl, { ...common, max: 10, idle_timeout: 60, connect_timeout: 10 })
    return { sql, embedded: false, url: databaseUrl, close: (timeout = 5) => sql.end({ timeout }) }
  }
  return openEmbedded(dataDir)
}

async function openEmbedded(dataDir: string): Promise<Database> {
  // Loaded only when needed: the WASM build is large and a real deployment never touches it.
  const { PGlite } = await import('@electric-sql/pglite')
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket')
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const unlock = await lockDataDir(dataDir)
  const pglite = await PGlite.create(dataDir)
  // mkdtemp makes a 0700 directory: only this user can reach the unauthenticated socket.
  const socketDir = await mkdtemp(join(tmpdir(), 'link-service-'))
  const socketPath = join(socketDir, '.s.PGSQL.5432')
  const server = new PGLiteSocketServer({ db: pglite, path: socketPath, maxConnections: 1 })
  await server.start()
  // PGlite runs one query at a time; one connection keeps transactions from interleaving.
  const sql = postgres({ ...common, path: socketPath, max: 1, user: 'postgres', database: 'postgres' })
  return {
    sql,
    embedded: true,
    url: undefined,
    async close(timeout = 5) {
      await sql.end({ timeout })
      await server.stop()
      await pglite.close()
      await rm(socketDir, { recursive: true, force: true })
      await unlock()
    },
  }
}

const LOCK_FILE = 'link-service.pid'
/** Lock files this process holds: a second open of one directory in-process is refused too. */
const held = new Set<string>()

/**
 * PGlite does not lock its directory, and two processes on one directory would corrupt it. A
 * pid file does. It appears atomically with its contents (written aside, then hard-linked into
 * place), and is taken over only when its holder is gone: a pid that is not running, our own pid
 * (left by an earlier life of this pid, as PID 1 in a container), or one from an earlier boot.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = join(dataDir, LOCK_FILE)
  if (held.has(file)) throw new Error(`DATA_DIR ${dataDir} is already open in this process`)
  const boot = await bootId()
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
  await writeFile(aside, `${process.pid}\n${boot}\n`, { mode: 0o600 })
  try {
    for (;;) {
      try {
        await link(aside, file)
        held.add(file)
        return async () => {
          held.delete(file)
          await rm(file, { force: true })
        }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
        const [pid, itsBoot] = (await readFile(file, 'utf8').catch(() => '')).split('\n')
        const holder = Number(pid)
        if (holder !== process.pid && itsBoot === boot && isRunning(holder)) {
          throw new Error(`DATA_DIR ${dataDir} is in use by process ${holder} (remove ${file} if that is wrong)`)
        }
        await rm(file, { force: true })
      }
    }
  } finally {
    await rm(aside, { force: true })
  }
}

function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch {
    // EPERM: the pid now belongs to another user. DATA_DIR is 0700, so that is not one of us.
    return false
  }
}

/** Linux's id of this boot ('' elsewhere): a pid from another boot is long gone. */
const bootId = () => readFile('/proc/sys/kernel/random/boot_id', 'utf8').then((id) => id.trim(), () => '')

// SQLSTATEs that say the database cannot serve us now, not that the statement was wrong. Whole
// classes: 08 connection exception, 28 authorization (raised while connecting), 40 transaction
// rollback (a deadlock or serialization victim: worth retrying), 53 insufficient resources, 57
// operator intervention (shutdown, cancel, database dropped), 58 system error.
const UNAVAILABLE_CLASSES = new Set(['08', '28', '40', '53', '57', '58'])
// 3D000 no such database, 55000 "not currently accepting connections", 25006 read-only (a standby
// after a fail-over).
const UNAVAILABLE_STATES = new Set(['3D000', '55000', '25006'])

/** True for errors that mean "the database cannot be reached", which we answer with 503. */
export function isConnectionError(err: unknown): boolean {
  const { code, syscall } = (err ?? {}) as { code?: unknown; syscall?: unknown }
  if (typeof code !== 'string') return false
  // postgres.js: CONNECTION_CLOSED, CONNECTION_ENDED, CONNECTION_DESTROYED, CONNECT_TIMEOUT
  if (code.startsWith('CONNECT')) return true
  // a socket error from Node (ECONNREFUSED, ENOTFOUND, EPIPE, ...): it names its system call
  if (typeof syscall === 'string') return /^E[A-Z_]+$/.test(code)
  return code.length === 5 && (UNAVAILABLE_CLASSES.has(code.slice(0, 2)) || UNAVAILABLE_STATES.has(code))
}

/** PostgreSQL unique_violation, for queries that turn it into a result. */
export const isUniqueViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '23505'
