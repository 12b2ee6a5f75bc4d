// The frame of every screen: its heading (also the document's title), an optional notice, and the
// navigation that matches being signed in or not.
import { h } from './dom.js'

/** Replaces the main region with a screen titled `title`, and moves focus there for screen readers. */
export function screen(title: string, notice: string | undefined, ...content: Node[]): HTMLElement {
  const main = document.getElementById('main')!
  document.title = `${title} · Link Service`
  main.replaceChildren(h('h1', {}, title), notice === undefined ? '' : h('p', { class: 'notice', role: 'status' }, notice), ...content)
  return main
}

/** A screen still loading: its title, and a line that says so. */
export function loading(title: string): void {
  screen(title, undefined, h('p', { class: 'muted' }, 'Loading…'))
}

const SIGNED_IN: Array<[string, string]> = [
  ['/app/links', 'Links'],
  ['/app/links/new', 'New link'],
  ['/app/webhooks', 'Webhooks'],
  ['/app/sessions', 'Sessions'],
  ['/app/account', 'Account'],
]

/** The main navigation; the current screen's link carries aria-current. */
export function navigation(signedIn: boolean, signOut: () => void): void {
  const nav = document.getElementById('nav')!
  if (!signedIn) {
    nav.replaceChildren(
      h('a', { href: '/app/signin', 'data-nav': true }, 'Sign in'),
      h('a', { href: '/app/signup', 'data-nav': true }, 'Sign up'),
      h('a', { href: '/app/report', 'data-nav': true }, 'Report a link'),
    )
  } else {
    nav.replaceChildren(
      ...SIGNED_IN.map(([href, text]) => h('a', { href, 'data-nav': true }, text)),
      h('button', { type: 'button', class: 'link', onclick: signOut }, 'Sign out'),
    )
  }
  for (const a of nav.querySelectorAll('a')) {
    if (a.pathname === location.pathname) a.setAttribute('aria-current', 'page')
  }
}
