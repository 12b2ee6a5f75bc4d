// The account's sessions: which are open, ending one, ending all but this one.
import { act, get, type Session } from './api.js'
import { h } from './dom.js'
import { actionAlert, run } from './forms.js'
import { when } from './format.js'
import { loading, screen } from './layout.js'
import { navigate } from './router.js'

export async function sessionsScreen(notice?: string): Promise<void> {
  loading('Sessions')
  const { sessions } = await get<{ sessions: Session[] }>('/auth/sessions')
  const others = sessions.filter((s) => !s.current).length
  const alert = actionAlert()
  const endOthers = h('button', { type: 'button', class: 'danger', disabled: others === 0 }, 'End all other sessions')
  endOthers.addEventListener('click', () =>
    void run(endOthers.parentElement!, alert, endOthers, async () => {
      await act('DELETE', '/auth/sessions')
      navigate('/app/sessions', `Ended ${others} other session${others === 1 ? '' : 's'}.`, true)
    }),
  )
  screen(
    'Sessions',
    notice,
    h('p', {}, 'Every sign-in is a session of its own. End the ones you do not recognise, or all but this one (after losing a device, say).'),
    // This one first: it is the one a person looks for, and the one that has no End button.
    h('ul', { class: 'sessions' }, ...[...sessions].sort((a, b) => Number(b.current) - Number(a.current)).map(sessionItem)),
    h('div', { class: 'actions' }, endOthers, alert),
  )
}

function sessionItem(s: Session): HTMLLIElement {
  const alert = actionAlert()
  const end = h('button', { type: 'button', 'aria-label': `End the session started ${when(s.created_at)}` }, 'End')
  end.addEventListener('click', () =>
    void run(item, alert, end, async () => {
      await act('DELETE', `/auth/sessions/${s.id}`)
      navigate('/app/sessions', 'Session ended.', true)
    }),
  )
  const item = h(
    'li',
    { class: 'session-card' },
    h('p', { class: 'title' }, s.current ? h('strong', {}, 'This session') : 'Another session', ` · started ${when(s.created_at)}`),
    h('p', { class: 'muted' }, `Last used ${when(s.last_used_at)} · expires ${when(s.expires_at)}`),
    s.current ? null : h('div', { class: 'actions' }, end, alert),
  )
  return item
}
