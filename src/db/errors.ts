// What database errors mean to the service: unavailable (503), a unique violation (a result),
// or a data directory another process holds.

/** DATA_DIR is held by another running service (or already open in this process). */
export class DataDirInUse extends Error {
  override name = 'DataDirInUse'
}

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

// A connection that was there and is gone: the statement may be sent again on a fresh one.
// (Not a refusal or a timeout: the database is not answering, and asking again would only wait.)
const LOST = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'ECONNRESET', 'EPIPE', '57P01', '57P02'])

/**
 * A statement that always answers one row answered none. Seen under connection kills (a create's
 * answer came back empty once in CI, docs/reliability.md): the driver lost the answer, so it is
 * told as the connection error it is (503, worth a retry), not as a crash.
 */
export const answerLost = (): Error =>
  Object.assign(new Error('the database answered no row where it always answers one: the answer was lost'), { code: 'CONNECTION_CLOSED' })

/** True when a read failed because its connection was cut (killed, reset): worth one retry on a fresh one. */
export const isConnectionLost = (err: unknown): boolean => LOST.has((err as { code?: unknown } | null)?.code as string)
