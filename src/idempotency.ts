// Idempotency-Key (IETF httpapi draft "The Idempotency-Key HTTP Header Field"): a client that did
// not hear the answer to a create (a COMMIT whose answer was lost, a 503 at the time limit) sends
// the request again with the same key and gets the first result, not a second link. The key and
// the first result are written in the same transaction as the create itself, so they exist
// together or not at all, on every node; they are kept for 24 hours.
import { createHash } from 'node:crypto'
import type { Sql, Tx } from './db/types.js'
import { badRequest, HttpError } from './http/errors.js'
import { errorReply, type HeaderMap, type Reply } from './http/reply.js'

/** How long a key's first result is answered again. */
export const KEY_HOURS = 24
/** The draft leaves the length open; 255 covers a UUID or a ULID with any prefix. */
const MAX_KEY_CHARS = 255
/** The reply headers a replay repeats (the request's own, such as X-Request-Id, are new). */
const KEPT_HEADERS = ['location', 'retry-after'] as const

export const keyReused = () =>
  new HttpError(422, 'IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used with another request; use a new key for a new request')

/**
 * The header's key, or undefined without one. The draft makes it a structured-field string
 * ("..."); a bare token is taken too, as most clients send one. Visible ASCII only.
 */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (Array.isArray(header)) throw badRequest('send one Idempotency-Key header')
  const quoted = header.length >= 2 && header.startsWith('"') && header.endsWith('"')
  const key = quoted ? header.slice(1, -1) : header
  if (key.length === 0 || key.length > MAX_KEY_CHARS || !/^[\x21-\x7e]+$/.test(key) || (quoted && /["\\]/.test(key))) {
    throw badRequest(`Idempotency-Key must be 1 to ${MAX_KEY_CHARS} visible ASCII characters (a UUID is a good key)`)
  }
  return key
}

/**
 * What makes two requests "the same": method, path and body. Passwords are left out: the table
 * must not hold a fast hash of one (a guess could be checked against it offline), so a retry that
 * changes only a password gets the first result.
 */
export function fingerprintOf(method: string, path: string, body: Record<string, unknown>): Buffer {
  const withoutPasswords = JSON.stringify(body, (name, value: unknown) => (name === 'password' && value !== null ? '(set)' : value))
  return createHash('sha256').update(`${method} ${path}\n${withoutPasswords}`).digest()
}

interface Stored {
  fingerprint: Buffer
  status: number
  headers: HeaderMap
  body: string | null
}

/** The key's first result within KEY_HOURS: replayed when the request is the same, 422 otherwise. */
export async function replayOf(sql: Sql, scope: string, key: string, fingerprint: Buffer): Promise<Reply | undefined> {
  const [row] = await sql<Stored[]>`
    select fingerprint, status, headers, body from idempotency_keys
    where scope = ${scope} and key = ${key} and created_at > now() - make_interval(hours => ${KEY_HOURS})`
  if (row === undefined) return undefined
  if (!row.fingerprint.equals(fingerprint)) throw keyReused()
  const headers: HeaderMap = { ...row.headers, 'idempotent-replayed': 'true' }
  if (row.body === null) return { status: row.status, headers }
  return { status: row.status, headers: { ...headers, 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from(row.body) }
}

/** Deletes the keys past KEY_HOURS (the session sweep's turn). */
export async function sweepIdempotencyKeys(sql: Sql): Promise<void> {
  await sql`delete from idempotency_keys where created_at <= now() - make_interval(hours => ${KEY_HOURS})`
}

/** Another request with the same key took it first: its result is to be replayed. */
export class KeyTaken extends Error {}
/** Ends the key's transaction without its effect (thrown inside it, never seen outside). */
class RollBack extends Error {}

/** Whether a handler's failure is a result to keep: an answer about the request, not about this moment. */
const kept = (err: unknown): err is HttpError => err instanceof HttpError && err.status < 500 && err.status !== 429 && err.status !== 401

/**
 * One request under a key. The handler runs its effect through `effect`: a transaction that first
 * claims the key (a request with the same key waits for it on the unique index), then runs the
 * effect, then stays open until `settle` is told the handler's outcome and stores it. A result
 * that is not kept, or a request abandoned at its time limit, rolls the effect back.
 */
export class KeyedRequest {
  #committed: Promise<void> | undefined
  #settle: ((outcome: Reply | undefined) => void) | undefined

  constructor(
    readonly sql: Sql,
    readonly scope: string,
    readonly key: string,
    readonly fingerprint: Buffer,
  ) {}

  effect = <T>(work: (tx: Tx) => Promise<T>): Promise<T> => {
    if (this.#committed !== undefined) throw new Error('one effect per request')
    return new Promise<T>((resolve, reject) => {
      const outcome = new Promise<Reply | undefined>((r) => (this.#settle = r))
      this.#committed = this.sql
        .begin(async (tx) => {
          const [claimed] = await tx`
            insert into idempotency_keys (scope, key, fingerprint) values (${this.scope}, ${this.key}, ${this.fingerprint})
            on conflict (scope, key) do update set fingerprint = excluded.fingerprint, created_at = now()
              where idempotency_keys.created_at <= now() - make_interval(hours => ${KEY_HOURS})
            returning 1`
          if (claimed === undefined) throw new KeyTaken()
          resolve(await work(tx))
          const reply = await outcome
          // Nothing to keep: the transaction ends without the effect.
          if (reply === undefined) throw new RollBack()
          const headers = Object.fromEntries(KEPT_HEADERS.flatMap((h) => (reply.headers?.[h] === undefined ? [] : [[h, reply.headers[h]]])))
          const body = reply.body === undefined ? null : JSON.stringify(reply.body)
          await tx`update idempotency_keys set status = ${reply.status}, headers = ${tx.json(headers)}, body = ${body}
            where scope = ${this.scope} and key = ${this.key}`
        })
        .then(
          () => undefined,
          (err: unknown) => {
            reject(err) // the claim's or the effect's own failure, when the effect had not resolved
            if (!(err instanceof KeyTaken) && !(err instanceof RollBack)) throw err
          },
        )
      this.#committed.catch(() => {})
    })
  }

  /**
   * The handler's outcome: a reply, or the error it threw. A reply or a kept error is stored and
   * committed with the effect (this waits for the commit, and throws when it fails: the client
   * then retries with the key); anything else rolls the effect back.
   */
  async settle(outcome: Reply | unknown): Promise<void> {
    if (this.#committed === undefined) return
    const reply = isReply(outcome) ? outcome : kept(outcome) ? errorReply(outcome) : undefined
    this.#settle?.(reply)
    await this.#committed
  }

  /** The request answers 503 at its time limit: the effect is rolled back when its statement returns. */
  abandon(): void {
    this.#settle?.(undefined)
  }
}

const isReply = (x: unknown): x is Reply => typeof x === 'object' && x !== null && !(x instanceof Error) && typeof (x as Reply).status === 'number'
