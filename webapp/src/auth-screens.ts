// Sign in and sign up. Both are rate limited by the API (5 a second per address, shared): a 429
// counts down on the button (forms.ts).
import { post, type Login, type User } from './api.js'
import { h } from './dom.js'
import { field, form, value } from './forms.js'
import { t, tNodes } from './i18n.js'
import { screen } from './layout.js'
import { keptPath } from './resume.js'
import { navigate } from './router.js'
import { remember } from './session.js'

async function signIn(username: string, password: string): Promise<void> {
  remember(await post<Login>('/auth/login', { username, password }))
  const back = keptPath()
  navigate(back ?? '/app/links', back === undefined ? undefined : t('signIn.back'))
}

export function signInScreen(notice?: string): void {
  screen(
    t('signIn.title'),
    notice,
    form(
      t('signIn.title'),
      [
        field(t('field.username'), 'username', { required: true, autocomplete: 'username' }),
        field(t('field.password'), 'password', { type: 'password', required: true, autocomplete: 'current-password' }),
      ],
      t('signIn.submit'),
      (data) => signIn(value(data, 'username'), value(data, 'password')),
    ),
    h('p', {}, ...tNodes('signIn.noAccount', { link: h('a', { href: '/app/signup', 'data-nav': true }, t('nav.signUp')) })),
  )
}

export function signUpScreen(notice?: string): void {
  screen(
    t('signUp.title'),
    notice,
    form(
      t('signUp.title'),
      [
        field(t('field.username'), 'username', { required: true, autocomplete: 'username', hint: t('signUp.usernameHint') }),
        field(t('field.displayName'), 'display_name', { required: true, autocomplete: 'name', hint: t('signUp.displayNameHint') }),
        field(t('field.password'), 'password', { type: 'password', required: true, autocomplete: 'new-password', hint: t('signUp.passwordHint') }),
      ],
      t('signUp.submit'),
      async (data) => {
        const user = await post<User>('/users', { username: value(data, 'username'), password: value(data, 'password'), display_name: value(data, 'display_name') })
        await signIn(user.username, value(data, 'password'))
      },
    ),
    h('p', {}, ...tNodes('signUp.haveAccount', { link: h('a', { href: '/app/signin', 'data-nav': true }, t('nav.signIn')) })),
  )
}
