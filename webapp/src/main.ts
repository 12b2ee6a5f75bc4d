// The app's entry: the route table, the signed-in guard, what a 401 does, and sign-out.
import { accountScreen } from './account-screen.js'
import { act, ApiError, whenUnauthorized } from './api.js'
import { signInScreen, signUpScreen } from './auth-screens.js'
import { h } from './dom.js'
import { load, t } from './i18n.js'
import { languageSwitcher, navigation, screen } from './layout.js'
import { createScreen, editScreen } from './link-form.js'
import { linkScreen } from './link-page.js'
import { linksScreen } from './links-screen.js'
import { reportScreen } from './report-screen.js'
import { dropPlace, keepPlace } from './resume.js'
import { interceptLinks, navigate, onNavigate } from './router.js'
import { sessionsScreen } from './sessions-screen.js'
import { forget, token } from './session.js'
import { deliveriesScreen, webhooksScreen } from './webhooks-screen.js'

type Screen = (notice: string | undefined, ...params: string[]) => void | Promise<void>

const CODE = '([0-9A-Za-z]{1,64})'
const OPEN: Array<[RegExp, Screen]> = [
  [/^\/app\/signin$/, signInScreen],
  [/^\/app\/signup$/, signUpScreen],
]
// Anyone's, signed in or not.
const ANYONE: Array<[RegExp, Screen]> = [[/^\/app\/report$/, reportScreen]]
const SIGNED_IN: Array<[RegExp, Screen]> = [
  [/^\/app(?:\/links)?$/, linksScreen],
  [/^\/app\/links\/new$/, createScreen],
  [new RegExp(`^/app/links/${CODE}$`), (n, code) => linkScreen(code!, n)],
  [new RegExp(`^/app/links/${CODE}/edit$`), (n, code) => editScreen(code!, n)],
  [/^\/app\/webhooks$/, webhooksScreen],
  [/^\/app\/webhooks\/([0-9a-f-]{36})$/, (n, id) => deliveriesScreen(id!, n)],
  [/^\/app\/sessions$/, sessionsScreen],
  [/^\/app\/account$/, accountScreen],
]

const match = (table: Array<[RegExp, Screen]>, path: string) => {
  for (const [re, screen] of table) {
    const m = re.exec(path)
    if (m !== null) return { screen, params: m.slice(1) }
  }
  return undefined
}

let first = true

async function render(notice?: string): Promise<void> {
  // After a navigation, focus goes to the new screen, so a screen reader reads it from its heading.
  if (!first) queueMicrotask(() => document.getElementById('main')!.focus())
  first = false
  const path = location.pathname.replace(/\/+$/, '') || '/app'
  const signedIn = token() !== null
  navigation(signedIn, signOut)
  const anyone = match(ANYONE, path)
  if (anyone !== undefined) return anyone.screen(notice)
  const open = match(OPEN, path)
  if (open !== undefined) {
    if (signedIn) return navigate('/app/links', undefined, true)
    return open.screen(notice)
  }
  const route = match(SIGNED_IN, path)
  if (route === undefined) {
    screen(t('notFound.title'), undefined, h('p', {}, t('notFound.text')), h('a', { href: '/app/links', 'data-nav': true }, t('goToLinks')))
    return
  }
  if (!signedIn) {
    // Signed out (or the tab's session expired): sign in first, then come back here.
    if (path !== '/app') keepPlace()
    return navigate('/app/signin', path === '/app' ? undefined : t('signIn.toContinue'), true)
  }
  try {
    await route.screen(notice, ...route.params)
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    if (err.code === 'UNAUTHORIZED') return // whenUnauthorized below has taken over
    screen(t(err.code === 'LINK_NOT_FOUND' ? 'notFound.link' : err.code === 'WEBHOOK_NOT_FOUND' ? 'notFound.webhook' : 'notFound.load'), undefined, h('p', { role: 'alert' }, err.message), h('a', { href: '/app/links', 'data-nav': true }, t('goToLinks')))
  }
}

async function signOut(): Promise<void> {
  try {
    await act('POST', '/auth/logout')
  } catch (err) {
    // Already ended elsewhere: signing out here is what was asked either way.
    if (!(err instanceof ApiError) || err.status !== 401) throw err
  }
  forget()
  dropPlace()
  navigate('/app/signin', t('signOut.done'))
}

// The API no longer takes the token (expired, ended elsewhere): keep the place, then sign in.
whenUnauthorized(() => {
  if (token() === null) return
  for (const dialog of document.querySelectorAll('dialog')) dialog.close()
  keepPlace()
  forget()
  navigate('/app/signin', t('session.ended'), true)
})

// The chosen language's words first (one small fetch); then the first screen.
await load()
languageSwitcher(() => void render())
onNavigate((notice) => void render(notice))
interceptLinks()
void render()
