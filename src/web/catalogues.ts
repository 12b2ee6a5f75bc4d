// The words of the pages for people, in every language of locales/ (one JSON catalogue per
// language, named by its tag: en.json, de.json, ar.json...), read once at start. English is the
// fallback and the reference: every catalogue has exactly its keys (test/unit/catalogues.test.ts).
//
// The API, for a page that says something:
//   const m = messagesFor(acceptLanguage)      // the best catalogue for an Accept-Language header
//                                              // (src/links/visitor.ts: visitorMessages(req) reads it from a request)
//   m.lang, m.dir                              // for <html lang dir> and Content-Language
//   m.t('unknown.title')                       // a message of the catalogue's "page" section
//   m.t('password.wait', { count: 3 })         // {count} fills in; a plural message picks its form by count
//   m.t('stopped.report', { link }, escapeHtml) // the message's own text escaped, the values put in as given
//   { ...PAGE_HEADERS, ...languageHeaders(m) }  // visitor-pages.ts: Content-Language; PAGE_HEADERS' Vary names Accept-Language
// To add a message: add its key to the "page" section of every locales/*.json (English first),
// then call m.t('its.key'). A catalogue is never read on the redirect itself: only a page asks.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A message: one text, or one per plural category of Intl.PluralRules ("other" always). */
export type Message = string | Partial<Record<Intl.LDMLPluralRule, string>> & { other: string }

/** A catalogue as stored in locales/{tag}.json. */
export interface Catalogue {
  language: { name: string; dir: 'ltr' | 'rtl' }
  /** the pages for people (src/web/visitor-pages.ts) */
  page: Record<string, Message>
  /** the web app (webapp/), shipped to the browser one language at a time by scripts/build-app.mjs */
  app: Record<string, Message>
}

export interface Messages {
  /** the catalogue's tag ("de"), for <html lang> and Content-Language */
  readonly lang: string
  readonly dir: 'ltr' | 'rtl'
  /** The message `key` with each {name} replaced by vars[name] (passed through `escape`, the message's own text is). */
  t(key: string, vars?: Record<string, string | number>, escape?: (text: string) => string): string
}

/** locales/ beside the build: dist/web/catalogues.js → ../../locales; build/src/web/catalogues.js (the test build) → ../../../locales */
export const LOCALES_DIR = [new URL('../../locales/', import.meta.url), new URL('../../../locales/', import.meta.url)]
  .map((u) => fileURLToPath(u))
  .find((dir) => existsSync(join(dir, 'en.json')))!

export const FALLBACK = 'en'

/** Every catalogue of `dir` by tag (lower case), as parsed. */
export function readCatalogues(dir = LOCALES_DIR): Map<string, Catalogue> {
  const all = new Map<string, Catalogue>()
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    all.set(file.slice(0, -5).toLowerCase(), JSON.parse(readFileSync(join(dir, file), 'utf8')) as Catalogue)
  }
  return all
}

const PLACEHOLDER = /\{(\w+)\}/g

/** The accessor of one catalogue's page messages; a key it lacks falls back to English's, then to the key itself. */
export function messagesOf(lang: string, catalogue: Catalogue, fallback: Catalogue = catalogue): Messages {
  const plurals = new Intl.PluralRules(lang)
  const numbers = new Intl.NumberFormat(lang)
  const dir = catalogue.language.dir === 'rtl' ? 'rtl' : 'ltr'
  return {
    lang,
    dir,
    t(key, vars = {}, escape = (text) => text) {
      const message = catalogue.page[key] ?? fallback.page[key] ?? key
      const text = typeof message === 'string' ? message : (message[plurals.select(Number(vars.count ?? 0))] ?? message.other)
      return escape(text).replace(PLACEHOLDER, (whole, name: string) => {
        const value = vars[name]
        return value === undefined ? whole : typeof value === 'number' ? numbers.format(value) : value
      })
    },
  }
}

const CATALOGUES = readCatalogues()
const ENGLISH_CATALOGUE = CATALOGUES.get(FALLBACK)!
const MESSAGES = new Map([...CATALOGUES].map(([lang, c]) => [lang, messagesOf(lang, c, ENGLISH_CATALOGUE)]))

export const ENGLISH = MESSAGES.get(FALLBACK)!

/** At most this many ranges of an Accept-Language are looked at: a browser sends a handful. */
const MAX_RANGES = 16

/**
 * The tag of the best catalogue for an Accept-Language header (RFC 9110 12.5.4): ranges by
 * falling q (q=0 never), each matched whole ("de"), then by its first subtag ("de-CH" → "de");
 * English when none matches. `available` is the set of tags there are.
 */
export function pickLanguage(header: string | undefined, available: ReadonlySet<string> | ReadonlyMap<string, unknown>): string {
  if (header === undefined || header === '') return FALLBACK
  const ranges: Array<{ tag: string; q: number; at: number }> = []
  for (const part of header.split(',', MAX_RANGES)) {
    const [range = '', ...params] = part.trim().toLowerCase().split(';')
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    const q = qp === undefined ? 1 : Number(qp.slice(2))
    if (range.trim() !== '' && Number.isFinite(q) && q > 0) ranges.push({ tag: range.trim(), q, at: ranges.length })
  }
  ranges.sort((a, b) => b.q - a.q || a.at - b.at)
  for (const { tag } of ranges) {
    if (available.has(tag)) return tag
    const primary = tag.split('-')[0]!
    if (available.has(primary)) return primary
  }
  return FALLBACK
}

/** The messages for an Accept-Language header (English when none of its languages is there). */
export const messagesFor = (acceptLanguage: string | undefined): Messages => MESSAGES.get(pickLanguage(acceptLanguage, MESSAGES))!
