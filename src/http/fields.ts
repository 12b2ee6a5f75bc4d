// Field validation for JSON bodies: collects every field error, then throws one 422 (contract §2).
import { invalidFields, type FieldError, type FieldErrorCode } from './errors.js'

const LONE_SURROGATE = /\p{Cs}/u
// Characters that render as nothing or reorder what follows, so that text shows other than it is:
// soft hyphen, zero-width space and joiners, word joiner and invisible operators, BOM, and every
// bidirectional control (LRM, RLM, ALM, the embeddings, overrides and isolates).
const INVISIBLE = /[\p{Bidi_Control}\u00AD\u200B-\u200D\u2060-\u2064\uFEFF]/u

// A zero-width joiner between two emoji makes one visible emoji (👩‍💻, 🏳️‍🌈: UTS #51).
const EMOJI_JOINER = /(?<=\p{Extended_Pictographic}[\uFE0F\u{1F3FB}-\u{1F3FF}]?)\u200D(?=\p{Extended_Pictographic})/gu

/**
 * True when the text holds a character that is invisible or changes the direction of text. With
 * `emoji`, a joiner inside an emoji sequence does not count (display names; never in URLs).
 */
export function hasInvisible(s: string, { emoji = false } = {}): boolean {
  return INVISIBLE.test(emoji ? s.replace(EMOJI_JOINER, '') : s)
}

/** Length in Unicode code points: an emoji counts 1 (contract §1). */
export function codePointLength(s: string): number {
  let n = 0
  for (const _ of s) n++
  return n
}

export interface StringRule {
  min: number
  max: number
  /** how length is measured: code points (default) or UTF-8 bytes */
  unit?: 'chars' | 'bytes'
  /** U+0000 makes any field but a password invalid (contract §1) */
  allowNul?: boolean
}

export class Fields {
  readonly #body: Record<string, unknown>
  readonly #errors: FieldError[] = []

  constructor(body: Record<string, unknown>) {
    this.#body = body
  }

  has(name: string): boolean {
    // null counts as absent: "not given" is what a client sending null means.
    return Object.hasOwn(this.#body, name) && this.#body[name] !== null
  }

  /** A required string field; undefined when it failed (the error is recorded). */
  string(name: string, rule: StringRule): string | undefined {
    if (!this.has(name)) return this.fail(name, 'REQUIRED', 'is required')
    return this.optionalString(name, rule)
  }

  optionalString(name: string, rule: StringRule): string | undefined {
    if (!this.has(name)) return undefined
    const value = this.#body[name]
    if (typeof value !== 'string') return this.fail(name, 'TYPE', 'must be a string')
    if (LONE_SURROGATE.test(value)) return this.fail(name, 'INVALID', 'must be valid Unicode (no lone surrogates)')
    if (!rule.allowNul && value.includes('\u0000')) return this.fail(name, 'INVALID', 'must not contain U+0000')
    const bytes = rule.unit === 'bytes'
    const length = bytes ? Buffer.byteLength(value, 'utf8') : codePointLength(value)
    const unit = bytes ? 'bytes' : 'characters'
    if (length < rule.min) return this.fail(name, 'TOO_SHORT', `must be at least ${rule.min} ${unit}`)
    if (length > rule.max) return this.fail(name, 'TOO_LONG', `must be at most ${rule.max} ${unit}`)
    return value
  }

  fail(field: string, code: FieldErrorCode, message: string): undefined {
    this.#errors.push({ field, code, message })
    return undefined
  }

  /** Throws 422 INVALID_FORM_BODY listing every field error, if there were any. */
  check(): void {
    if (this.#errors.length > 0) throw invalidFields(this.#errors)
  }
}
