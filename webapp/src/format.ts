// Dates, numbers and percentages as people read them: in the app's language (i18n.ts) and the
// device's time zone.
import { language } from './i18n.js'

interface Formats {
  lang: string
  dateTime: Intl.DateTimeFormat
  utcDate: Intl.DateTimeFormat
  toSecond: Intl.DateTimeFormat
  count: Intl.NumberFormat
  percent: Intl.NumberFormat
  rate: Intl.NumberFormat
  probability: Intl.NumberFormat
}

let formats: Formats | undefined

/** The formats of the current language, made again when it changes. */
function current(): Formats {
  const lang = language()
  if (formats?.lang !== lang) {
    formats = {
      lang,
      dateTime: new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short' }),
      // Statistics days are UTC days ("2026-11-20"): shown as such, whatever the local zone.
      utcDate: new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeZone: 'UTC' }),
      toSecond: new Intl.DateTimeFormat(lang, { dateStyle: 'short', timeStyle: 'medium' }),
      count: new Intl.NumberFormat(lang),
      percent: new Intl.NumberFormat(lang, { style: 'percent', maximumFractionDigits: 0 }),
      rate: new Intl.NumberFormat(lang, { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 }),
      probability: new Intl.NumberFormat(lang, { minimumFractionDigits: 3, maximumFractionDigits: 3 }),
    }
  }
  return formats
}

export const when = (iso: string): string => current().dateTime.format(new Date(iso))
/** To the second, for events a few seconds apart (a webhook's attempts). */
export const whenExactly = (iso: string): string => current().toSecond.format(new Date(iso))
export const day = (date: string): string => current().utcDate.format(new Date(`${date}T00:00:00Z`))
export const number = (n: number): string => current().count.format(n)
/** 0.6 → "60%" (or "60 %", "٦٠٪"...) */
export const percent = (share: number): string => current().percent.format(share)
/** 0.1234 → "12.3%", for conversion rates and shares that differ by less than a point. */
export const rate = (share: number): string => current().rate.format(share)
/** 0.0421 → "0.042" (a p-value). */
export const probability = (p: number): string => current().probability.format(p)

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
