// The app's entry: the route table, the signed-in guard, what a 401 does, and sign-out.
import { accountScreen } from './account-screen.js'
import { act, ApiError, whenUnauthorized } from './api.js'
import { signInScreen, signUpScreen } from './auth-screens.js'
import { h } from './dom.js'
import { navigation, screen } from './layout.js'
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
    screen('Not found', undefined, h('p', {}, 'There is no such page in this app. '), h('a', { href: '/app/links', 'data-nav': true }, 'Go to your links'))
    return
  }
  if (!signedIn) {
    // Signed out (or the tab's session expired): sign in first, then come back here.
    if (path !== '/app') keepPlace()
    return navigate('/app/signin', path === '/app' ? undefined : 'Sign in to continue.', true)
  }
  try {
    await route.screen(notice, ...route.params)
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    if (err.code === 'UNAUTHORIZED') return // whenUnauthorized below has taken over
    screen(err.code === 'LINK_NOT_FOUND' ? 'No such link' : err.code === 'WEBHOOK_NOT_FOUND' ? 'No such webhook' : 'Could not load this page', undefined, h('p', { role: 'alert' }, err.message), h('a', { href: '/app/links', 'data-nav': true }, 'Go to your links'))
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
  navigate('/app/signin', 'You have signed out.')
}

// The API no longer takes the token (expired, ended elsewhere): keep the place, then sign in.
whenUnauthorized(() => {
  if (token() === null) return
  for (const dialog of document.querySelectorAll('dialog')) dialog.close()
  keepPlace()
  forget()
  navigate('/app/signin', 'Your session has ended. Sign in again to continue where you were.', true)
})

onNavigate((notice) => void render(notice))
interceptLinks()
void render()
