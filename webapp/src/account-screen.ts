// The account: display name, password, taking one's data away, and deleting it all.
import { act, get, patch, type User } from './api.js'
import { announce, h } from './dom.js'
import { ApiError } from './api.js'
import { field, form, value } from './forms.js'
import { when } from './format.js'
import { t, tNodes } from './i18n.js'
import { loading, screen } from './layout.js'
import { restoreDraft } from './resume.js'
import { navigate } from './router.js'
import { forget } from './session.js'
import { confirmDialog, downloadButton } from './widgets.js'

export async function accountScreen(notice?: string): Promise<void> {
  loading(t('nav.account'))
  const me = await get<User>('/users/me')
  const name = form(
    t('field.displayName'),
    [field(t('field.displayName'), 'display_name', { required: true, autocomplete: 'name', value: me.display_name, hint: t('account.nameHint') })],
    t('account.saveName'),
    async (data) => {
      const user = await patch<User>('/users/me', { display_name: value(data, 'display_name') })
      announce(t('account.nameSaved', { name: user.display_name }))
    },
  )
  const password = form(
    t('field.password'),
    [
      field(t('account.current'), 'current_password', { type: 'password', required: true, autocomplete: 'current-password' }),
      field(t('field.newPassword'), 'password', { type: 'password', required: true, autocomplete: 'new-password', hint: t('account.newHint') }),
      field(t('account.repeat'), 'password_again', { type: 'password', required: true, autocomplete: 'new-password' }),
    ],
    t('account.change'),
    async (data) => {
      if (value(data, 'password') !== value(data, 'password_again')) {
        throw new ApiError(422, 'INVALID_FORM_BODY', '', { password_again: t('account.differ') }, 0, null)
      }
      await patch<User>('/users/me', { password: value(data, 'password'), current_password: value(data, 'current_password') })
      password.reset()
      announce(t('account.changed'))
    },
  )
  const remove = confirmDialog({
    trigger: t('account.delete'),
    title: t('account.deleteTitle'),
    text: t('account.deleteText', { username: me.username }),
    confirm: t('account.delete'),
    action: async () => {
      await act('DELETE', '/users/me')
      forget()
      navigate('/app/signin', t('account.deleted'), true)
    },
  })
  screen(
    t('nav.account'),
    notice,
    h('p', {}, ...tNodes('account.signedInAs', { username: h('strong', {}, me.username), since: when(me.created_at) })),
    h('section', { class: 'panel', 'aria-labelledby': 'name-h' }, h('h2', { id: 'name-h' }, t('field.displayName')), name),
    h('section', { class: 'panel', 'aria-labelledby': 'password-h' }, h('h2', { id: 'password-h' }, t('field.password')), password),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'data-h' },
      h('h2', { id: 'data-h' }, t('account.data')),
      h('p', {}, t('account.dataText')),
      h(
        'div',
        { class: 'actions' },
        downloadButton(t('account.dataJson'), '/users/me/export', `link-service-${me.username}.json`),
        downloadButton(t('account.dataZip'), '/users/me/export?format=zip', `link-service-${me.username}.zip`),
      ),
    ),
    h('section', { class: 'panel danger-zone', 'aria-labelledby': 'delete-h' }, h('h2', { id: 'delete-h' }, t('account.delete')), h('p', {}, t('account.deleteNote')), remove),
  )
  restoreDraft(name)
}
