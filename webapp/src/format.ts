// Dates and numbers as people read them, in their own locale and time zone.

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
// Statistics days are UTC days ("2026-11-20"): shown as such, whatever the local zone.
const utcDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' })
const count = new Intl.NumberFormat()

export const when = (iso: string): string => dateTime.format(new Date(iso))
const toSecond = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'medium' })
/** To the second, for events a few seconds apart (a webhook's attempts). */
export const whenExactly = (iso: string): string => toSecond.format(new Date(iso))
export const day = (date: string): string => utcDate.format(new Date(`${date}T00:00:00Z`))
export const number = (n: number): string => count.format(n)
/** "1 visit", "2 visits" */
export const counted = (n: number, one: string, many: string): string => `${count.format(n)} ${n === 1 ? one : many}`

/** "2030-01-31T12:00" in local time, for <input type="datetime-local">. */
export function localInput(iso: string): string {
  const d = new Date(iso)
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}

/** A datetime-local value (local time) as the API's RFC 3339; '' → null (no expiry). */
export function fromLocalInput(value: string): string | null {
  if (value === '') return null
  const d = new Date(value)
  // An unparsable value goes to the API as typed, and its 422 says what is wrong with it.
  return Number.isNaN(d.getTime()) ? value : d.toISOString()
}

/** Is this link past its expiry (by this device's clock)? */
export const expired = (expiresAt: string | null): boolean => expiresAt !== null && Date.parse(expiresAt) <= Date.now()
