// The bearer token: in memory and in this tab's sessionStorage, never in a cookie (the spec
// wants no implicit browser credentials). sessionStorage outlives a reload but not the tab, and is
// readable by any script of this origin: the CSP (docs/decisions.md) is what keeps others out.

const KEY = 'link-service.session'

interface Stored {
  token: string
  expires_at: string
}

let current: Stored | null = read()

function read(): Stored | null {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Stored | null
    return s !== null && Date.parse(s.expires_at) > Date.now() ? s : null
  } catch {
    return null
  }
}

/** The token, or null when signed out or past expires_at (the API's answer is authoritative). */
export function token(): string | null {
  if (current !== null && Date.parse(current.expires_at) <= Date.now()) forget()
  return current?.token ?? null
}

export function remember(session: Stored): void {
  current = { token: session.token, expires_at: session.expires_at }
  sessionStorage.setItem(KEY, JSON.stringify(current))
}

export function forget(): void {
  current = null
  sessionStorage.removeItem(KEY)
}
