// The app's language: the one chosen in this tab (the switcher keeps it in sessionStorage), else
// the first of the browser's languages the service has, else English. Only that language's
// catalogue is fetched: scripts/build-app.mjs writes the "app" section of each locales/*.json as a
// file of its own and lists them in index.html's <meta name="catalogues">. Every word the app
// shows comes through t() (test/unit/webapp-strings.test.ts finds any that does not).

/** A message: one text, or one per plural category of Intl.PluralRules ("other" always). */
type Message = string | Record<string, string>

interface Available {
  name: string
  dir: 'ltr' | 'rtl'
  href: string
}

const KEY = 'link-service.language'
const FALLBACK = 'en'
const AVAILABLE: Record<string, Available> = JSON.parse(document.querySelector<HTMLMetaElement>('meta[name="catalogues"]')?.content ?? '{}')

let lang = FALLBACK
let messages: Record<string, Message> = {}
let plurals = new Intl.PluralRules(FALLBACK)
let numbers = new Intl.NumberFormat(FALLBACK)

/** The language kept in this tab, else the browser's first that there is ("de-CH" → "de"), else English. */
function preferred(): string {
  const kept = sessionStorage.getItem(KEY)
  if (kept !== null && kept in AVAILABLE) return kept
  for (const tag of navigator.languages ?? [navigator.language]) {
    const lower = tag.toLowerCase()
    if (lower in AVAILABLE) return lower
    const primary = lower.split('-')[0]!
    if (primary in AVAILABLE) return primary
  }
  return FALLBACK
}

/** Fetches `code`'s catalogue (English if that fails) and lays the page out in its direction. */
export async function load(code = preferred()): Promise<void> {
  let chosen = code in AVAILABLE ? code : FALLBACK
  let res = await fetch(AVAILABLE[chosen]!.href).catch(() => undefined)
  if (res?.ok !== true && chosen !== FALLBACK) {
    chosen = FALLBACK
    res = await fetch(AVAILABLE[chosen]!.href)
  }
  messages = (await res!.json()) as Record<string, Message>
  lang = chosen
  plurals = new Intl.PluralRules(lang)
  numbers = new Intl.NumberFormat(lang)
  document.documentElement.lang = lang
  document.documentElement.dir = AVAILABLE[lang]!.dir
}

/** Switches the tab to `code` (kept for this tab only). */
export async function choose(code: string): Promise<void> {
  sessionStorage.setItem(KEY, code)
  await load(code)
}

/** The language the app speaks now, for Intl. */
export const language = (): string => lang

/** Every language there is, named in itself. */
export const languages = (): Array<{ code: string; name: string }> => Object.entries(AVAILABLE).map(([code, a]) => ({ code, name: a.name }))

const PLACEHOLDER = /\{(\w+)\}/g

/** The message `key`, each {name} replaced by vars[name] (numbers in the language's digits); a plural one picks its form by vars.count. */
export function t(key: string, vars: Record<string, string | number> = {}): string {
  const message = messages[key] ?? key
  const text = typeof message === 'string' ? message : (message[plurals.select(Number(vars.count ?? 0))] ?? message.other ?? key)
  return text.replace(PLACEHOLDER, (whole, name: string) => {
    const value = vars[name]
    return value === undefined ? whole : typeof value === 'number' ? numbers.format(value) : value
  })
}

/** The message `key` as DOM children, each {name} replaced by parts[name] (an element, such as a link). */
export function tNodes(key: string, parts: Record<string, Node | string>): Array<Node | string> {
  return t(key)
    .split(/(\{\w+\})/)
    .filter((piece) => piece !== '')
    .map((piece) => {
      const name = /^\{(\w+)\}$/.exec(piece)?.[1]
      return name !== undefined && parts[name] !== undefined ? parts[name]! : piece
    })
}
