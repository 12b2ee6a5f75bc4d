// Query parameters (GET /api/v1/links/{code}/stats, /qr): read from the request target, checked
// like body fields, refused together as one 422 INVALID_QUERY listing each parameter.
import { invalidQuery, type FieldError, type FieldErrorCode } from './errors.js'

export class Query {
  readonly #params: URLSearchParams
  readonly #errors: FieldError[] = []

  constructor(target: string | undefined) {
    const q = target?.indexOf('?') ?? -1
    this.#params = new URLSearchParams(q === -1 ? '' : target!.slice(q + 1))
  }

  /** The parameter's value; undefined when absent or empty. Given twice, or holding U+0000, it is refused. */
  string(name: string): string | undefined {
    const values = this.#params.getAll(name)
    if (values.length > 1) return this.fail(name, 'INVALID', 'must be given at most once')
    // As in a body (contract §1): U+0000 makes a value invalid (PostgreSQL's text cannot hold it).
    if (values[0]?.includes('\u0000')) return this.fail(name, 'INVALID', 'must not contain U+0000')
    return values[0] === '' ? undefined : values[0]
  }

  /** A decimal integer from min to max, or undefined when absent. */
  int(name: string, min: number, max: number): number | undefined {
    const raw = this.string(name)
    if (raw === undefined) return undefined
    if (!/^\d{1,9}$/.test(raw)) return this.fail(name, 'TYPE', 'must be a whole number')
    const n = Number(raw)
    if (n < min) return this.fail(name, 'TOO_SHORT', `must be at least ${min}`)
    if (n > max) return this.fail(name, 'TOO_LONG', `must be at most ${max}`)
    return n
  }

  /** One of a few words, or undefined when absent. */
  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const raw = this.string(name)
    if (raw === undefined || (allowed as readonly string[]).includes(raw)) return raw as T | undefined
    return this.fail(name, 'INVALID', `must be one of ${allowed.join(', ')}`)
  }

  fail(name: string, code: FieldErrorCode, message: string): undefined {
    this.#errors.push({ field: name, code, message })
    return undefined
  }

  /** Throws 422 INVALID_QUERY listing every parameter error, if there were any. */
  check(): void {
    if (this.#errors.length > 0) throw invalidQuery(this.#errors)
  }
}
