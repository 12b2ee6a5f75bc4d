// Account fields (spec §2, contract §3). Validators take the parsed body and return typed input.
import { Fields, hasInvisible } from '../http/fields.js'

const VISIBLE_ASCII = /^[\x21-\x7e]*$/
const CONTROL = /\p{Cc}/u
// White space, or characters that render as nothing (zero-width space and joiners, BOM, ...).
const ONLY_BLANK = /^[\p{White_Space}\p{Default_Ignorable_Code_Point}]*$/u

const USERNAME = { min: 2, max: 32 }
const PASSWORD = { min: 8, max: 128, allowNul: true }
const DISPLAY_NAME = { min: 2, max: 32 }

export interface Registration {
  username: string
  password: string
  displayName: string
}

export interface Credentials {
  username: string
  password: string
}

export interface ProfileChange {
  displayName?: string
  password?: { current: string; next: string }
}

export function parseRegistration(body: Record<string, unknown>): Registration {
  const f = new Fields(body)
  const username = checkUsername(f, f.string('username', USERNAME))
  const password = f.string('password', PASSWORD)
  const displayName = checkDisplayName(f, f.string('display_name', DISPLAY_NAME))
  f.check()
  return { username: username!.toLowerCase(), password: password!, displayName: displayName! }
}

/**
 * A stored account's fields (a row of an import): the registration's rules, with the username in
 * the lowercase form registration stores. Throws the same 422 a registration would.
 */
export function checkStoredAccount(row: Record<string, unknown>): void {
  const f = new Fields(row)
  const username = checkUsername(f, f.string('username', USERNAME))
  if (username !== undefined && username !== username.toLowerCase()) f.fail('username', 'INVALID', 'must be lowercase, as registration stores it')
  checkDisplayName(f, f.string('display_name', DISPLAY_NAME))
  f.check()
}

/** A new password alone (the admin CLI's reset): the registration rules. */
export function parseNewPassword(password: string): string {
  const f = new Fields({ password })
  const checked = f.string('password', PASSWORD)
  f.check()
  return checked!
}

/** Login checks only shape: any length may be tried, it just will not match (contract §3). */
export function parseCredentials(body: Record<string, unknown>): Credentials {
  const f = new Fields(body)
  const username = f.string('username', { min: 0, max: Infinity })
  const password = f.string('password', { min: 0, max: Infinity, allowNul: true })
  f.check()
  return { username: username!, password: password! }
}

export function parseProfileChange(body: Record<string, unknown>): ProfileChange {
  const f = new Fields(body)
  const displayName = checkDisplayName(f, f.optionalString('display_name', DISPLAY_NAME))
  const next = f.optionalString('password', PASSWORD)
  const current = f.has('password')
    ? f.string('current_password', { min: 0, max: Infinity, allowNul: true })
    : undefined
  if (!f.has('display_name') && !f.has('password')) {
    f.fail('display_name', 'REQUIRED', 'display_name or password is required')
  }
  f.check()
  const change: ProfileChange = {}
  if (displayName !== undefined) change.displayName = displayName
  if (next !== undefined) change.password = { current: current!, next }
  return change
}

function checkUsername(f: Fields, username: string | undefined): string | undefined {
  if (username !== undefined && !VISIBLE_ASCII.test(username)) {
    return f.fail('username', 'INVALID', 'must contain only visible ASCII characters (no spaces)')
  }
  return username
}

function checkDisplayName(f: Fields, name: string | undefined): string | undefined {
  if (name === undefined) return undefined
  if (CONTROL.test(name)) return f.fail('display_name', 'INVALID', 'must not contain control characters')
  if (ONLY_BLANK.test(name)) return f.fail('display_name', 'INVALID', 'must not be only whitespace or invisible characters')
  // U+202E would turn "Bob\u202Egnp.exe" into what looks like "Bobexe.png".
  if (hasInvisible(name, { emoji: true })) return f.fail('display_name', 'INVALID', 'must not contain invisible or bidirectional control characters')
  return name
}
