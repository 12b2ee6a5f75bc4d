// The account's sessions: which are open, ending one, ending all but this one.
import { act, get, type Session } from './api.js'
import { h } from './dom.js'
import { actionAlert, run } from './forms.js'
import { when } from './format.js'
import { t } from './i18n.js'
import { loading, screen } from './layout.js'
import { navigate } from './router.js'

export async function sessionsScreen(notice?: string): Promise<void> {
  loading(t('nav.sessions'))
  const { sessions } = await get<{ sessions: Session[] }>('/auth/sessions')
  const others = sessions.filter((s) => !s.current).length
  const alert = actionAlert()
  const endOthers = h('button', { type: 'button', class: 'danger', disabled: others === 0 }, t('sessions.endOthers'))
  endOthers.addEventListener('click', () =>
    void run(endOthers.parentElement!, alert, endOthers, async () => {
      await act('DELETE', '/auth/sessions')
      navigate('/app/sessions', t('sessions.endedOthers', { count: others }), true)
    }),
  )
  screen(
    t('nav.sessions'),
    notice,
    h('p', {}, t('sessions.intro')),
    // This one first: it is the one a person looks for, and the one that has no End button.
    h('ul', { class: 'sessions' }, ...[...sessions].sort((a, b) => Number(b.current) - Number(a.current)).map(sessionItem)),
    h('div', { class: 'actions' }, endOthers, alert),
  )
}

function sessionItem(s: Session): HTMLLIElement {
  const alert = actionAlert()
  const end = h('button', { type: 'button', 'aria-label': t('sessions.endLabel', { when: when(s.created_at) }) }, t('sessions.end'))
  end.addEventListener('click', () =>
    void run(item, alert, end, async () => {
      await act('DELETE', `/auth/sessions/${s.id}`)
      navigate('/app/sessions', t('sessions.ended'), true)
    }),
  )
  const item = h(
    'li',
    { class: 'session-card' },
    h('p', { class: 'title' }, s.current ? h('strong', {}, t('sessions.this')) : t('sessions.another'), ' · ', t('sessions.started', { when: when(s.created_at) })),
    h('p', { class: 'muted' }, t('sessions.times', { used: when(s.last_used_at), expires: when(s.expires_at) })),
    s.current ? null : h('div', { class: 'actions' }, end, alert),
  )
  return item
}
