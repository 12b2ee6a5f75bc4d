// Webhooks: the account's endpoints (add one with its events, its secret shown once; turn on and
// off; send a test; delete) and each endpoint's deliveries, every attempt listed, with retry.
import { act, EVENTS, get, patch, post, type Delivery, type Webhook } from './api.js'
import { announce, h } from './dom.js'
import { actionAlert, field, form, run, value } from './forms.js'
import { when, whenExactly } from './format.js'
import { t } from './i18n.js'
import { loading, screen } from './layout.js'
import { navigate } from './router.js'
import { confirmDialog, copyButton } from './widgets.js'

const MAX_WEBHOOKS = 5

/** What each event means, as a catalogue key. */
const EVENT_TEXT: Record<string, string> = {
  'link.created': 'event.created',
  'link.updated': 'event.updated',
  'link.deleted': 'event.deleted',
  'link.expired': 'event.expired',
  'link.disabled': 'event.disabled',
  'link.enabled': 'event.enabled',
  'link.clicked': 'event.clicked',
  'link.unhealthy': 'event.unhealthy',
  'link.healthy': 'event.healthy',
}

export async function webhooksScreen(notice?: string): Promise<void> {
  loading(t('nav.webhooks'))
  const { webhooks } = await get<{ webhooks: Webhook[] }>('/webhooks')
  show(webhooks, notice)
}

/** The screen; `created` is the endpoint just added, whose secret is shown this once. */
function show(webhooks: Webhook[], notice?: string, created?: Webhook): void {
  const intro = h(
    'p',
    {},
    t('webhooks.intro'),
  )
  const list = webhooks.length === 0 ? h('p', { class: 'empty' }, t('webhooks.none')) : h('ul', { class: 'cards' }, ...webhooks.map(hookItem))
  const add =
    webhooks.length >= MAX_WEBHOOKS
      ? h('p', { class: 'muted' }, t('webhooks.max', { max: MAX_WEBHOOKS }))
      : createForm(webhooks)
  screen(
    t('nav.webhooks'),
    notice,
    intro,
    ...(created?.secret === undefined ? [] : [secretPanel(created)]),
    list,
    h('section', { class: 'panel', 'aria-labelledby': 'add-h' }, h('h2', { id: 'add-h' }, t('webhooks.add')), add),
  )
  if (created !== undefined) document.getElementById('secret-h')?.focus()
}

function secretPanel(hook: Webhook): HTMLElement {
  return h(
    'section',
    { class: 'panel secret', 'aria-labelledby': 'secret-h' },
    h('h2', { id: 'secret-h', tabindex: '-1' }, t('webhooks.secretTitle')),
    h('p', {}, t('webhooks.secretText')),
    h('p', { class: 'short' }, h('code', { class: 'code' }, hook.secret!), copyButton(hook.secret!, t('webhooks.copySecret', { url: hook.url }))),
  )
}

function eventsField(checked: readonly string[]): HTMLElement {
  const error = h('p', { class: 'field-error', id: 'events-error', hidden: true })
  return h(
    'fieldset',
    { class: 'field choices', 'aria-describedby': error.id },
    h('legend', {}, t('webhooks.events')),
    ...EVENTS.map((event) =>
      h(
        'label',
        { class: 'choice' },
        h('input', { type: 'checkbox', name: 'events', value: event, checked: checked.includes(event), id: `events-${event}` }),
        h('span', {}, h('code', {}, event), t('webhooks.eventText', { text: t(EVENT_TEXT[event]!) })),
      ),
    ),
    error,
  )
}

function createForm(webhooks: Webhook[]): HTMLFormElement {
  return form(
    t('webhooks.add'),
    [
      field(t('webhooks.url'), 'url', { type: 'url', required: true, inputmode: 'url', placeholder: 'https://example.com/hooks/links', hint: t('webhooks.urlHint') }),
      eventsField(EVENTS),
    ],
    t('webhooks.addSubmit'),
    async (data) => {
      const hook = await post<Webhook>('/webhooks', { url: value(data, 'url'), events: data.getAll('events').map(String) })
      show([hook, ...webhooks], t('webhooks.added', { url: hook.url }), hook)
    },
  )
}

function state(hook: Webhook): string {
  if (hook.enabled) return t('webhooks.on')
  return hook.disabled_reason === null ? t('webhooks.off') : t('webhooks.offBecause', { reason: hook.disabled_reason })
}

function hookItem(hook: Webhook): HTMLLIElement {
  const alert = actionAlert()
  const toggle = h('button', { type: 'button', 'aria-label': t(hook.enabled ? 'webhooks.turnOffLabel' : 'webhooks.turnOnLabel', { url: hook.url }) }, t(hook.enabled ? 'webhooks.turnOff' : 'webhooks.turnOn'))
  toggle.addEventListener('click', () =>
    void run(item, alert, toggle, async () => {
      const changed = await patch<Webhook>(`/webhooks/${hook.id}`, { enabled: !hook.enabled })
      navigate('/app/webhooks', t(changed.enabled ? 'webhooks.turnedOn' : 'webhooks.turnedOff', { url: changed.url }), true)
    }),
  )
  const test = testButton(hook, alert, () => announce(t('webhooks.testQueued', { url: hook.url })))
  const remove = confirmDialog({
    trigger: t('delete'),
    label: t('webhooks.deleteLabel', { url: hook.url }),
    title: t('webhooks.deleteTitle'),
    text: t('webhooks.deleteText', { url: hook.url }),
    confirm: t('webhooks.deleteConfirm'),
    action: async () => {
      await act('DELETE', `/webhooks/${hook.id}`)
      navigate('/app/webhooks', t('webhooks.deleted', { url: hook.url }), true)
    },
  })
  const item = h(
    'li',
    { class: 'hook-card' },
    h('p', { class: 'code' }, hook.url),
    h(
      'dl',
      { class: 'facts' },
      h('div', {}, h('dt', {}, t('webhooks.state')), h('dd', { class: hook.enabled ? '' : 'warn' }, state(hook))),
      h('div', {}, h('dt', {}, t('webhooks.events')), h('dd', { class: 'events' }, hook.events.join(', '))),
      h('div', {}, h('dt', {}, t('webhooks.addedAt')), h('dd', {}, when(hook.created_at))),
    ),
    h(
      'div',
      { class: 'actions' },
      h('a', { class: 'button', href: `/app/webhooks/${hook.id}`, 'data-nav': true, 'aria-label': t('webhooks.deliveriesLabel', { url: hook.url }) }, t('deliveries.title')),
      test,
      toggle,
      remove,
      alert,
    ),
  )
  return item
}

function testButton(hook: Webhook, alert: HTMLElement, after: () => void): HTMLButtonElement {
  const button = h('button', { type: 'button', 'aria-label': t('webhooks.sendTestLabel', { url: hook.url }) }, t('webhooks.sendTest'))
  button.addEventListener('click', () =>
    void run(button.parentElement!, alert, button, async () => {
      await post(`/webhooks/${hook.id}/test`)
      after()
    }),
  )
  return button
}

const DELIVERY_STATE: Record<Delivery['state'], string> = { pending: 'delivery.pending', delivered: 'delivery.delivered', failed: 'delivery.failed' }

function deliveryItem(hookId: string, d: Delivery): HTMLLIElement {
  const alert = actionAlert()
  const text = t(d.state === 'delivered' ? 'delivery.sendAgain' : 'delivery.retry')
  const retry = h('button', { type: 'button', 'aria-label': t('delivery.retryLabel', { action: text, event: d.event, when: whenExactly(d.created_at) }) }, text)
  retry.addEventListener('click', () =>
    void run(item, alert, retry, async () => {
      await post(`/webhooks/${hookId}/deliveries/${d.id}/retry`)
      navigate(`/app/webhooks/${hookId}`, t('delivery.sending', { event: d.event }), true)
    }),
  )
  const status =
    d.state !== 'pending' ? t(DELIVERY_STATE[d.state]) : d.attempts.length === 0 ? t('delivery.notSent') : t('delivery.nextTry', { when: whenExactly(d.next_attempt_at!) })
  const attempts =
    d.attempts.length === 0
      ? null
      : h(
          'table',
          {},
          h('caption', {}, t('delivery.attempts', { count: d.attempts.length })),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('delivery.time')), h('th', { scope: 'col' }, t('delivery.result')), h('th', { scope: 'col' }, t('delivery.duration')))),
          h(
            'tbody',
            {},
            ...d.attempts.map((a) =>
              h(
                'tr',
                {},
                h('td', {}, whenExactly(a.attempted_at)),
                h('td', { class: a.error === null ? '' : 'warn' }, a.error ?? t('delivery.answered', { status: String(a.status_code) })),
                h('td', {}, t('delivery.ms', { ms: a.duration_ms })),
              ),
            ),
          ),
        )
  const item = h(
    'li',
    { class: 'delivery-card' },
    h('p', { class: 'title' }, h('code', {}, d.event), ` · ${whenExactly(d.created_at)}`),
    h('p', { class: d.state === 'failed' ? 'warn' : 'muted' }, status),
    attempts,
    d.state === 'pending' ? null : h('div', { class: 'actions' }, retry, alert),
  )
  return item
}

export async function deliveriesScreen(id: string, notice?: string): Promise<void> {
  loading(t('deliveries.title'))
  const [hook, { deliveries }] = await Promise.all([get<Webhook>(`/webhooks/${id}`), get<{ deliveries: Delivery[] }>(`/webhooks/${id}/deliveries`)])
  const refresh = h('button', { type: 'button', onclick: () => navigate(`/app/webhooks/${id}`, undefined, true) }, t('deliveries.refresh'))
  const alert = actionAlert()
  const test = testButton(hook, alert, () => navigate(`/app/webhooks/${id}`, t('deliveries.testQueued'), true))
  screen(
    t('deliveries.title'),
    notice,
    h('p', { class: 'code' }, hook.url),
    h('p', { class: 'muted' }, hook.enabled ? t('deliveries.newest') : `${t('deliveries.newest')} ${t('deliveries.off')}`),
    h('div', { class: 'actions' }, refresh, test, alert),
    deliveries.length === 0
      ? h('p', { class: 'empty' }, t('deliveries.none'))
      : h('ul', { class: 'cards' }, ...deliveries.map((d) => deliveryItem(id, d))),
    h('p', {}, h('a', { href: '/app/webhooks', 'data-nav': true }, t('deliveries.back'))),
  )
}
