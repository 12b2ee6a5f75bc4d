// Webhooks: the account's endpoints (add one with its events, its secret shown once; turn on and
// off; send a test; delete) and each endpoint's deliveries, every attempt listed, with retry.
import { act, EVENTS, get, patch, post, type Delivery, type Webhook } from './api.js'
import { announce, h } from './dom.js'
import { actionAlert, field, form, run, value } from './forms.js'
import { counted, when, whenExactly } from './format.js'
import { loading, screen } from './layout.js'
import { navigate } from './router.js'
import { confirmDialog, copyButton } from './widgets.js'

const MAX_WEBHOOKS = 5

const EVENT_TEXT: Record<string, string> = {
  'link.created': 'a link is created',
  'link.updated': 'its URL, expiry or another option changes',
  'link.deleted': 'a link is deleted',
  'link.expired': 'its expiry passes',
  'link.disabled': 'the operator stops it',
  'link.enabled': 'the operator lets it go again',
  'link.clicked': 'visits counted: one event per link per flush, with the count',
  'link.unhealthy': 'a check finds its destination broken, unreachable or leading to a blocked site',
  'link.healthy': 'a check finds its destination reachable again',
}

export async function webhooksScreen(notice?: string): Promise<void> {
  loading('Webhooks')
  const { webhooks } = await get<{ webhooks: Webhook[] }>('/webhooks')
  show(webhooks, notice)
}

/** The screen; `created` is the endpoint just added, whose secret is shown this once. */
function show(webhooks: Webhook[], notice?: string, created?: Webhook): void {
  const intro = h(
    'p',
    {},
    'Each endpoint gets a signed POST for the events it subscribes to, following Standard Webhooks (standardwebhooks.com): check the webhook-signature header with the endpoint\'s secret. A receiver that is down gets every event once it is back.',
  )
  const list = webhooks.length === 0 ? h('p', { class: 'empty' }, 'No webhooks yet.') : h('ul', { class: 'cards' }, ...webhooks.map(hookItem))
  const add =
    webhooks.length >= MAX_WEBHOOKS
      ? h('p', { class: 'muted' }, `You have ${MAX_WEBHOOKS} webhooks, the most an account may have. Delete one to add another.`)
      : createForm(webhooks)
  screen(
    'Webhooks',
    notice,
    intro,
    ...(created?.secret === undefined ? [] : [secretPanel(created)]),
    list,
    h('section', { class: 'panel', 'aria-labelledby': 'add-h' }, h('h2', { id: 'add-h' }, 'Add an endpoint'), add),
  )
  if (created !== undefined) document.getElementById('secret-h')?.focus()
}

function secretPanel(hook: Webhook): HTMLElement {
  return h(
    'section',
    { class: 'panel secret', 'aria-labelledby': 'secret-h' },
    h('h2', { id: 'secret-h', tabindex: '-1' }, 'Its signing secret'),
    h('p', {}, 'Copy it now: it is shown only this once. Your receiver needs it to check each request\'s signature.'),
    h('p', { class: 'short' }, h('code', { class: 'code' }, hook.secret!), copyButton(hook.secret!, `the secret of ${hook.url}`)),
  )
}

function eventsField(checked: readonly string[]): HTMLElement {
  const error = h('p', { class: 'field-error', id: 'events-error', hidden: true })
  return h(
    'fieldset',
    { class: 'field choices', 'aria-describedby': error.id },
    h('legend', {}, 'Events'),
    ...EVENTS.map((event) =>
      h(
        'label',
        { class: 'choice' },
        h('input', { type: 'checkbox', name: 'events', value: event, checked: checked.includes(event), id: `events-${event}` }),
        h('span', {}, h('code', {}, event), `: ${EVENT_TEXT[event]}`),
      ),
    ),
    error,
  )
}

function createForm(webhooks: Webhook[]): HTMLFormElement {
  return form(
    'Add an endpoint',
    [
      field('Endpoint URL', 'url', { type: 'url', required: true, inputmode: 'url', placeholder: 'https://example.com/hooks/links', hint: 'An https address of your receiver. It is never given a redirect to follow.' }),
      eventsField(EVENTS),
    ],
    'Add endpoint',
    async (data) => {
      const hook = await post<Webhook>('/webhooks', { url: value(data, 'url'), events: data.getAll('events').map(String) })
      show([hook, ...webhooks], `Added ${hook.url}.`, hook)
    },
  )
}

function state(hook: Webhook): string {
  if (hook.enabled) return 'On'
  return hook.disabled_reason === null ? 'Off' : `Off: ${hook.disabled_reason}`
}

function hookItem(hook: Webhook): HTMLLIElement {
  const alert = actionAlert()
  const toggle = h('button', { type: 'button', 'aria-label': `${hook.enabled ? 'Turn off' : 'Turn on'} ${hook.url}` }, hook.enabled ? 'Turn off' : 'Turn on')
  toggle.addEventListener('click', () =>
    void run(item, alert, toggle, async () => {
      const changed = await patch<Webhook>(`/webhooks/${hook.id}`, { enabled: !hook.enabled })
      navigate('/app/webhooks', `${changed.enabled ? 'Turned on' : 'Turned off'} ${changed.url}.`, true)
    }),
  )
  const test = testButton(hook, alert, () => announce(`Test event queued for ${hook.url}. Its delivery shows under Deliveries.`))
  const remove = confirmDialog({
    trigger: 'Delete',
    label: `Delete ${hook.url}`,
    title: 'Delete this webhook?',
    text: `${hook.url} gets no more events, and its deliveries are deleted with it.`,
    confirm: 'Delete webhook',
    action: async () => {
      await act('DELETE', `/webhooks/${hook.id}`)
      navigate('/app/webhooks', `Deleted ${hook.url}.`, true)
    },
  })
  const item = h(
    'li',
    { class: 'hook-card' },
    h('p', { class: 'code' }, hook.url),
    h(
      'dl',
      { class: 'facts' },
      h('div', {}, h('dt', {}, 'State'), h('dd', { class: hook.enabled ? '' : 'warn' }, state(hook))),
      h('div', {}, h('dt', {}, 'Events'), h('dd', { class: 'events' }, hook.events.join(', '))),
      h('div', {}, h('dt', {}, 'Added'), h('dd', {}, when(hook.created_at))),
    ),
    h(
      'div',
      { class: 'actions' },
      h('a', { class: 'button', href: `/app/webhooks/${hook.id}`, 'data-nav': true, 'aria-label': `Deliveries of ${hook.url}` }, 'Deliveries'),
      test,
      toggle,
      remove,
      alert,
    ),
  )
  return item
}

function testButton(hook: Webhook, alert: HTMLElement, after: () => void): HTMLButtonElement {
  const button = h('button', { type: 'button', 'aria-label': `Send test to ${hook.url}` }, 'Send test')
  button.addEventListener('click', () =>
    void run(button.parentElement!, alert, button, async () => {
      await post(`/webhooks/${hook.id}/test`)
      after()
    }),
  )
  return button
}

const DELIVERY_STATE: Record<Delivery['state'], string> = { pending: 'Waiting', delivered: 'Delivered', failed: 'Failed, no retries left' }

function deliveryItem(hookId: string, d: Delivery): HTMLLIElement {
  const alert = actionAlert()
  const text = d.state === 'delivered' ? 'Send again' : 'Retry now'
  const retry = h('button', { type: 'button', 'aria-label': `${text}: ${d.event} of ${whenExactly(d.created_at)}` }, text)
  retry.addEventListener('click', () =>
    void run(item, alert, retry, async () => {
      await post(`/webhooks/${hookId}/deliveries/${d.id}/retry`)
      navigate(`/app/webhooks/${hookId}`, `Sending ${d.event} again.`, true)
    }),
  )
  const pending = d.state === 'pending' ? (d.attempts.length === 0 ? ': not sent yet' : `: next try ${whenExactly(d.next_attempt_at!)}`) : ''
  const attempts =
    d.attempts.length === 0
      ? null
      : h(
          'table',
          {},
          h('caption', {}, counted(d.attempts.length, 'attempt', 'attempts')),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Time'), h('th', { scope: 'col' }, 'Result'), h('th', { scope: 'col' }, 'Duration'))),
          h(
            'tbody',
            {},
            ...d.attempts.map((a) =>
              h(
                'tr',
                {},
                h('td', {}, whenExactly(a.attempted_at)),
                h('td', { class: a.error === null ? '' : 'warn' }, a.error ?? `answered ${a.status_code}`),
                h('td', {}, `${a.duration_ms} ms`),
              ),
            ),
          ),
        )
  const item = h(
    'li',
    { class: 'delivery-card' },
    h('p', { class: 'title' }, h('code', {}, d.event), ` · ${whenExactly(d.created_at)}`),
    h('p', { class: d.state === 'failed' ? 'warn' : 'muted' }, DELIVERY_STATE[d.state] + pending),
    attempts,
    d.state === 'pending' ? null : h('div', { class: 'actions' }, retry, alert),
  )
  return item
}

export async function deliveriesScreen(id: string, notice?: string): Promise<void> {
  loading('Deliveries')
  const [hook, { deliveries }] = await Promise.all([get<Webhook>(`/webhooks/${id}`), get<{ deliveries: Delivery[] }>(`/webhooks/${id}/deliveries`)])
  const refresh = h('button', { type: 'button', onclick: () => navigate(`/app/webhooks/${id}`, undefined, true) }, 'Refresh')
  const alert = actionAlert()
  const test = testButton(hook, alert, () => navigate(`/app/webhooks/${id}`, 'Test event queued.', true))
  screen(
    'Deliveries',
    notice,
    h('p', { class: 'code' }, hook.url),
    h('p', { class: 'muted' }, `The newest 100, each attempt listed. ${hook.enabled ? '' : 'This endpoint is off: nothing is sent to it.'}`),
    h('div', { class: 'actions' }, refresh, test, alert),
    deliveries.length === 0
      ? h('p', { class: 'empty' }, 'No deliveries yet. Send a test event to see one here.')
      : h('ul', { class: 'cards' }, ...deliveries.map((d) => deliveryItem(id, d))),
    h('p', {}, h('a', { href: '/app/webhooks', 'data-nav': true }, 'Back to webhooks')),
  )
}
