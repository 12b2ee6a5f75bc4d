// "401 returns to sign-in and keeps what the user was doing": where they were and what they had
// typed (never a password) wait in sessionStorage until they are signed in again.

const KEY = 'link-service.resume'

interface Resume {
  path: string
  draft: Record<string, string>
}

/** Keeps the current address and the values of the screen's forms. */
export function keepPlace(): void {
  const draft: Record<string, string> = {}
  for (const input of document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('main form input[name], main form textarea[name]')) {
    if (input.type !== 'password' && input.type !== 'checkbox' && input.value !== '') draft[input.name] = input.value
  }
  sessionStorage.setItem(KEY, JSON.stringify({ path: location.pathname, draft } satisfies Resume))
}

/** Where to go after signing in, if a place was kept (kept further only if there is a draft to restore). */
export function keptPath(): string | undefined {
  const kept = read()
  if (kept !== undefined && Object.keys(kept.draft).length === 0) sessionStorage.removeItem(KEY)
  return kept?.path
}

/** Fills the form with what was typed before the session ended, once, on the screen it was typed on. */
export function restoreDraft(form: HTMLFormElement): void {
  const kept = read()
  if (kept === undefined || kept.path !== location.pathname) return
  sessionStorage.removeItem(KEY)
  for (const [name, value] of Object.entries(kept.draft)) {
    const input = form.elements.namedItem(name)
    if (input instanceof HTMLInputElement || input instanceof HTMLTextAreaElement) input.value = value
  }
}

export function dropPlace(): void {
  sessionStorage.removeItem(KEY)
}

function read(): Resume | undefined {
  try {
    return (JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Resume | null) ?? undefined
  } catch {
    return undefined
  }
}
