// The frame of every screen: its heading (also the document's title), an optional notice, the
// navigation that matches being signed in or not, and the language switcher.
import { h } from './dom.js'
import { choose, language, languages, t } from './i18n.js'

/** Replaces the main region with a screen titled `title`, and moves focus there for screen readers. */
export function screen(title: string, notice: string | undefined, ...content: Node[]): HTMLElement {
  const main = document.getElementById('main')!
  document.title = t('title', { title })
  main.replaceChildren(h('h1', {}, title), notice === undefined ? '' : h('p', { class: 'notice', role: 'status' }, notice), ...content)
  return main
}

/** A screen still loading: its title, and a line that says so. */
export function loading(title: string): void {
  screen(title, undefined, h('p', { class: 'muted' }, t('loading')))
}

const SIGNED_IN: Array<[string, string]> = [
  ['/app/links', 'nav.links'],
  ['/app/links/new', 'nav.new'],
  ['/app/webhooks', 'nav.webhooks'],
  ['/app/sessions', 'nav.sessions'],
  ['/app/account', 'nav.account'],
]

/** The main navigation; the current screen's link carries aria-current. */
export function navigation(signedIn: boolean, signOut: () => void): void {
  const nav = document.getElementById('nav')!
  nav.setAttribute('aria-label', t('nav.label'))
  document.querySelector('.skip')!.textContent = t('skip')
  if (!signedIn) {
    nav.replaceChildren(
      h('a', { href: '/app/signin', 'data-nav': true }, t('nav.signIn')),
      h('a', { href: '/app/signup', 'data-nav': true }, t('nav.signUp')),
      h('a', { href: '/app/report', 'data-nav': true }, t('nav.report')),
    )
  } else {
    nav.replaceChildren(
      ...SIGNED_IN.map(([href, key]) => h('a', { href, 'data-nav': true }, t(key))),
      h('button', { type: 'button', class: 'link', onclick: signOut }, t('nav.signOut')),
    )
  }
  for (const a of nav.querySelectorAll('a')) {
    if (a.pathname === location.pathname) a.setAttribute('aria-current', 'page')
  }
}

/** The language switcher in the header: each language named in itself; a change redraws the screen in it. */
export function languageSwitcher(redraw: () => void): void {
  const select = h(
    'select',
    { id: 'language', 'aria-label': t('language') },
    ...languages().map(({ code, name }) => h('option', { value: code, lang: code, selected: code === language() }, name)),
  )
  select.addEventListener('change', async () => {
    await choose(select.value)
    languageSwitcher(redraw)
    redraw()
    // The redrawn screen takes focus (main.ts) in a microtask; the person is still at the switcher.
    queueMicrotask(() => document.getElementById('language')?.focus())
  })
  document.getElementById('languages')!.replaceChildren(select)
}
