// Many links at once on the New link screen: URLs pasted one per line go to POST /links/bulk in one
// request, and each line gets its result beside it: the short link (with a copy button) or why not.
import { describe, post, type BulkResult } from './api.js'
import { announce, h } from './dom.js'
import { actionAlert, run } from './forms.js'
import { t } from './i18n.js'
import { copyButton } from './widgets.js'

/** The API's batch size (MAX_BULK_ITEMS) */
const MAX_LINES = 50

function resultItem(url: string, r: BulkResult): HTMLLIElement {
  if ('link' in r) {
    return h(
      'li',
      { class: 'ok' },
      h('span', { class: 'target' }, url),
      h('span', { class: 'short' }, h('a', { href: `/app/links/${r.link.code}`, 'data-nav': true, class: 'code' }, r.link.short_url), copyButton(r.link.short_url, t('copy.shortUrlOf', { code: r.link.code }))),
    )
  }
  const why = r.status === 429 && r.retry_after !== undefined ? t('bulk.retry', { count: r.retry_after }) : describe(r.error)
  return h('li', { class: 'failed' }, h('span', { class: 'target' }, url), h('span', { class: 'field-error' }, t('bulk.notCreated', { why })))
}

/** The panel: a textarea of URLs, its button, and the results, one per non-empty line, in order. */
export function bulkPanel(): HTMLElement {
  const hint = h('p', { class: 'hint', id: 'bulk-urls-hint' }, t('bulk.hint', { max: MAX_LINES }))
  const error = h('p', { class: 'field-error', id: 'bulk-urls-error', hidden: true })
  const input = h('textarea', { id: 'bulk-urls', name: 'urls', rows: '6', spellcheck: 'false', autocapitalize: 'off', 'aria-describedby': `${hint.id} ${error.id}` })
  const alert = actionAlert()
  const submit = h('button', { type: 'submit' }, t('bulk.submit'))
  const results = h('ol', { class: 'bulk-results', 'aria-label': t('bulk.results') })
  const form = h(
    'form',
    { 'aria-label': t('bulk.title'), novalidate: true },
    h('div', { class: 'field' }, h('label', { for: input.id }, t('bulk.label')), hint, input, error),
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
      if (urls.length === 0) return fieldError(t('bulk.empty'))
      if (urls.length > MAX_LINES) return fieldError(t('bulk.tooMany', { max: MAX_LINES, count: urls.length }))
      const { results: answers } = await post<{ results: BulkResult[] }>('/links/bulk', { items: urls.map((url) => ({ url })) })
      results.replaceChildren(...answers.map((r, i) => resultItem(urls[i]!, r)))
      const made = answers.filter((r) => r.status === 201).length
      announce(t('bulk.done', { count: made, total: urls.length }))
    })
  })
  return h('section', { class: 'panel bulk', 'aria-labelledby': 'bulk-h' }, h('h2', { id: 'bulk-h' }, t('bulk.title')), form, results)
}
