// Many links at once on the New link screen: URLs pasted one per line go to POST /links/bulk in one
// request, and each line gets its result beside it: the short link (with a copy button) or why not.
import { describe, post, type BulkResult } from './api.js'
import { announce, h } from './dom.js'
import { actionAlert, run } from './forms.js'
import { counted } from './format.js'
import { copyButton } from './widgets.js'

/** The API's batch size (MAX_BULK_ITEMS) */
const MAX_LINES = 50

function resultItem(url: string, r: BulkResult): HTMLLIElement {
  if ('link' in r) {
    return h(
      'li',
      { class: 'ok' },
      h('span', { class: 'target' }, url),
      h('span', { class: 'short' }, h('a', { href: `/app/links/${r.link.code}`, 'data-nav': true, class: 'code' }, r.link.short_url), copyButton(r.link.short_url, `short URL ${r.link.code}`)),
    )
  }
  const why = r.status === 429 && r.retry_after !== undefined ? `Too many links created this minute. Try this one again in ${r.retry_after} s.` : describe(r.error)
  return h('li', { class: 'failed' }, h('span', { class: 'target' }, url), h('span', { class: 'field-error' }, `Not created: ${why}`))
}

/** The panel: a textarea of URLs, its button, and the results, one per non-empty line, in order. */
export function bulkPanel(): HTMLElement {
  const hint = h('p', { class: 'hint', id: 'bulk-urls-hint' }, `One URL per line, up to ${MAX_LINES}. Each gets a random code and no expiry; blank lines are skipped.`)
  const error = h('p', { class: 'field-error', id: 'bulk-urls-error', hidden: true })
  const input = h('textarea', { id: 'bulk-urls', name: 'urls', rows: '6', spellcheck: 'false', autocapitalize: 'off', 'aria-describedby': `${hint.id} ${error.id}` })
  const alert = actionAlert()
  const submit = h('button', { type: 'submit' }, 'Create these links')
  const results = h('ol', { class: 'bulk-results', 'aria-label': 'Results, one per line' })
  const form = h(
    'form',
    { 'aria-label': 'Many links at once', novalidate: true },
    h('div', { class: 'field' }, h('label', { for: input.id }, 'Addresses, one per line'), hint, input, error),
    h('div', { class: 'actions' }, submit, alert),
  )
  const fieldError = (message: string) => {
    input.setAttribute('aria-invalid', 'true')
    error.textContent = message
    error.hidden = false
    input.focus()
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault()
    const urls = input.value.split('\n').map((line) => line.trim()).filter((line) => line !== '')
    void run(form, alert, submit, async () => {
      results.replaceChildren()
      if (urls.length === 0) return fieldError('Paste at least one URL.')
      if (urls.length > MAX_LINES) return fieldError(`At most ${MAX_LINES} URLs at once; there are ${urls.length}. Send the rest next.`)
      const { results: answers } = await post<{ results: BulkResult[] }>('/links/bulk', { items: urls.map((url) => ({ url })) })
      results.replaceChildren(...answers.map((r, i) => resultItem(urls[i]!, r)))
      const made = answers.filter((r) => r.status === 201).length
      announce(`Created ${counted(made, 'link', 'links')} of ${urls.length}.`)
    })
  })
  return h('section', { class: 'panel bulk', 'aria-labelledby': 'bulk-h' }, h('h2', { id: 'bulk-h' }, 'Many links at once'), form, results)
}
