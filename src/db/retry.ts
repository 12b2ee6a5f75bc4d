// A statement or transaction that PostgreSQL chose as the victim of a conflict is run again. A
// deadlock (40P01) or a serialization failure (40001) rolls the victim's whole transaction back,
// so running the same statement, or the same transaction from its start, again is safe; it
// usually goes through at once, the other side having finished. The requests' client retries
// them (retryingConflicts, used for every handler's `deps.sql`): a bounded number of attempts,
// with a short random pause between them; the last one's error is what the caller sees.
import type { Sql } from './types.js'

/** The victim of a deadlock (40P01) or a serialization failure (40001): its transaction was rolled back. */
export const isConflictVictim = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code
  return code === '40P01' || code === '40001'
}

/** Attempts in all, the first included. */
export const CONFLICT_ATTEMPTS = 3
/** The pause before the nth retry (1, 2, ...): a random time below n × this, so two victims do not meet again in step. */
const PAUSE_MS = 20

const pause = (retry: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.random() * PAUSE_MS * retry))

export interface RetryOptions {
  /** attempts in all, the first included (CONFLICT_ATTEMPTS) */
  attempts?: number
  /** told of each retry, before its pause (a metric, a log line) */
  onRetry?: (err: unknown) => void
  /** false: this failure is not retried after all (the statement's rows already went to a callback) */
  canRetry?: () => boolean
}

/**
 * `work(attempt)` (attempt 0, 1, ...) until it does not fail as a conflict's victim, at most
 * `attempts` times; the last failure is thrown as it is. `work` must be safe to run again from
 * the start: one statement, or a transaction whose callback does nothing but talk to the database.
 */
export async function retryConflicts<T>(work: (attempt: number) => Promise<T>, { attempts = CONFLICT_ATTEMPTS, onRetry = () => {}, canRetry = () => true }: RetryOptions = {}): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work(attempt)
    } catch (err) {
      if (!isConflictVictim(err) || attempt + 1 >= attempts || !canRetry()) throw err
      onRetry(err)
      await pause(attempt + 1)
    }
  }
}

/** The parts of the driver's query object (postgres.js Query) that a retry reads. */
interface QueryState extends Promise<unknown> {
  strings: TemplateStringsArray
  isRaw?: boolean | 'values'
  options: { simple?: boolean; prepare?: boolean }
  cursorFn?: unknown
  forEachFn?: unknown
  streaming?: boolean
  onlyDescribe?: boolean
}

const isTemplate = (first: unknown): first is TemplateStringsArray => Array.isArray(first) && Array.isArray((first as unknown as { raw?: unknown }).raw)

/**
 * `sql` whose statements and transactions are retried as victims of a conflict (retryConflicts):
 * a tagged statement awaited on its own (a transaction of its own), and `begin(...)` from the
 * start of its callback. A statement used as a fragment of another, or read through a cursor or
 * forEach, is left as it is; so is anything sent inside a transaction (its `tx` is the driver's),
 * where the retry is the whole transaction's. Other uses (sql(...) helpers, unsafe, reserve) pass
 * through. `onRetry` is told of each retry (a metric, a log line).
 */
export function retryingConflicts(sql: Sql, onRetry: (err: unknown) => void = () => {}): Sql {
  return new Proxy(sql, {
    apply(target, thisArg, args: unknown[]) {
      const query = Reflect.apply(target, thisArg, args) as unknown
      if (!isTemplate(args[0])) return query
      const first = query as QueryState
      const own = Object.getPrototypeOf(first) as QueryState
      let outcome: Promise<unknown> | undefined
      const streamed = () => first.cursorFn !== undefined || first.forEachFn !== undefined || first.streaming === true || first.onlyDescribe === true
      const settled = () =>
        (outcome ??= retryConflicts(
          (attempt) => {
            if (attempt === 0) return own.then.call(first, (rows) => rows)
            const again = Reflect.apply(target, thisArg, args) as QueryState
            again.isRaw = first.isRaw
            Object.assign(again.options, first.options)
            return again.then((rows) => rows)
          },
          { onRetry, canRetry: () => !streamed() },
        ))
      // The driver's query is a promise that sends itself when first awaited: awaiting it now
      // awaits its retries too. It stays the driver's object, so fragments and flags work as before.
      Object.assign(first, {
        then: (onFulfilled?: (v: unknown) => unknown, onRejected?: (e: unknown) => unknown) => settled().then(onFulfilled, onRejected),
        catch: (onRejected?: (e: unknown) => unknown) => settled().catch(onRejected),
        finally: (onFinally?: () => void) => settled().finally(onFinally),
      })
      return first
    },
    get(target, prop, receiver) {
      if (prop === 'begin') {
        return (...args: unknown[]) => retryConflicts(() => (target.begin as (...a: unknown[]) => Promise<unknown>)(...args), { onRetry })
      }
      return Reflect.get(target, prop, receiver)
    },
  })
}
