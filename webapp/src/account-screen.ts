// The account: display name, password, taking one's data away, and deleting it all.
import { act, get, patch, type User } from './api.js'
import { announce, h } from './dom.js'
import { ApiError } from './api.js'
import { field, form, value } from './forms.js'
import { when } from './format.js'
import { loading, screen } from './layout.js'
import { restoreDraft } from './resume.js'
import { navigate } from './router.js'
import { forget } from './session.js'
import { confirmDialog, downloadButton } from './widgets.js'

export async function accountScreen(notice?: string): Promise<void> {
  loading('Account')
  const me = await get<User>('/users/me')
  const name = form(
    'Display name',
    [field('Display name', 'display_name', { required: true, autocomplete: 'name', value: me.display_name, hint: '2 to 32 characters.' })],
    'Save name',
    async (data) => {
      const user = await patch<User>('/users/me', { display_name: value(data, 'display_name') })
      announce(`Display name saved: ${user.display_name}`)
    },
  )
  const password = form(
    'Password',
    [
      field('Current password', 'current_password', { type: 'password', required: true, autocomplete: 'current-password' }),
      field('New password', 'password', { type: 'password', required: true, autocomplete: 'new-password', hint: '8 to 128 characters. Your other sessions end when it changes.' }),
      field('Repeat the new password', 'password_again', { type: 'password', required: true, autocomplete: 'new-password' }),
    ],
    'Change password',
    async (data) => {
      if (value(data, 'password') !== value(data, 'password_again')) {
        throw new ApiError(422, 'INVALID_FORM_BODY', '', { password_again: 'The two new passwords differ.' }, 0, null)
      }
      await patch<User>('/users/me', { password: value(data, 'password'), current_password: value(data, 'current_password') })
      password.reset()
      announce('Password changed. Your other sessions have ended.')
    },
  )
  const remove = confirmDialog({
    trigger: 'Delete account',
    title: 'Delete your account?',
    text: `The account ${me.username}, all its links and all its sessions are deleted now. The short URLs stop working, and this cannot be undone.`,
    confirm: 'Delete account',
    action: async () => {
      await act('DELETE', '/users/me')
      forget()
      navigate('/app/signin', 'Your account has been deleted.', true)
    },
  })
  screen(
    'Account',
    notice,
    h('p', {}, 'Signed in as ', h('strong', {}, me.username), `, since ${when(me.created_at)}.`),
    h('section', { class: 'panel', 'aria-labelledby': 'name-h' }, h('h2', { id: 'name-h' }, 'Display name'), name),
    h('section', { class: 'panel', 'aria-labelledby': 'password-h' }, h('h2', { id: 'password-h' }, 'Password'), password),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'data-h' },
      h('h2', { id: 'data-h' }, 'Your data'),
      h('p', {}, 'Everything kept about you: your account, your links with their statistics, your sessions and webhooks. A few downloads a minute.'),
      h(
        'div',
        { class: 'actions' },
        downloadButton('Download my data', '/users/me/export', `link-service-${me.username}.json`),
        downloadButton('As CSV files (ZIP)', '/users/me/export?format=zip', `link-service-${me.username}.zip`),
      ),
    ),
    h('section', { class: 'panel danger-zone', 'aria-labelledby': 'delete-h' }, h('h2', { id: 'delete-h' }, 'Delete account'), h('p', {}, 'This deletes your links too.'), remove),
  )
  restoreDraft(name)
}
