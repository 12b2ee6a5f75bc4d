// Sign in and sign up. Both are rate limited by the API (5 a second per address, shared): a 429
// counts down on the button (forms.ts).
import { post, type Login, type User } from './api.js'
import { h } from './dom.js'
import { field, form, value } from './forms.js'
import { screen } from './layout.js'
import { keptPath } from './resume.js'
import { navigate } from './router.js'
import { remember } from './session.js'

async function signIn(username: string, password: string): Promise<void> {
  remember(await post<Login>('/auth/login', { username, password }))
  const back = keptPath()
  navigate(back ?? '/app/links', back === undefined ? undefined : 'Signed in again. You are back where you were.')
}

export function signInScreen(notice?: string): void {
  screen(
    'Sign in',
    notice,
    form(
      'Sign in',
      [
        field('Username', 'username', { required: true, autocomplete: 'username' }),
        field('Password', 'password', { type: 'password', required: true, autocomplete: 'current-password' }),
      ],
      'Sign in',
      (data) => signIn(value(data, 'username'), value(data, 'password')),
    ),
    h('p', {}, 'No account yet? ', h('a', { href: '/app/signup', 'data-nav': true }, 'Sign up')),
  )
}

export function signUpScreen(notice?: string): void {
  screen(
    'Sign up',
    notice,
    form(
      'Sign up',
      [
        field('Username', 'username', { required: true, autocomplete: 'username', hint: '2 to 32 characters, no spaces. Stored in lowercase; sign in with it in lowercase.' }),
        field('Display name', 'display_name', { required: true, autocomplete: 'name', hint: '2 to 32 characters, shown to you.' }),
        field('Password', 'password', { type: 'password', required: true, autocomplete: 'new-password', hint: '8 to 128 characters.' }),
      ],
      'Create account',
      async (data) => {
        const user = await post<User>('/users', { username: value(data, 'username'), password: value(data, 'password'), display_name: value(data, 'display_name') })
        await signIn(user.username, value(data, 'password'))
      },
    ),
    h('p', {}, 'Have an account? ', h('a', { href: '/app/signin', 'data-nav': true }, 'Sign in')),
  )
}
