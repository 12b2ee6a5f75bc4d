// "Report a link": anyone, signed in or not, tells the operator about a link that leads to
// phishing, malware or spam (POST /api/v1/reports). Reached from the service's pages for a stopped
// or unknown link with ?code=..., which fills in the link.
import { ApiError, post } from './api.js'
import { h } from './dom.js'
import { field, form, value } from './forms.js'
import { t } from './i18n.js'
import { screen } from './layout.js'

const CODE = /^[0-9A-Za-z]{8}$/
const REASONS: Array<[string, string]> = [
  ['phishing', 'report.phishing'],
  ['malware', 'report.malware'],
  ['spam', 'report.spam'],
  ['other', 'report.other'],
]

function reasonField(): HTMLElement {
  const error = h('p', { class: 'field-error', id: 'report-reason-error', hidden: true })
  return h(
    'fieldset',
    { class: 'field choices', 'aria-describedby': error.id },
    h('legend', {}, t('report.question')),
    ...REASONS.map(([reason, key]) =>
      h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'reason', value: reason, required: true, id: `report-reason-${reason}` }), t(key)),
    ),
    error,
  )
}

function detailsField(): HTMLElement {
  const hint = h('p', { class: 'hint', id: 'report-details-hint' }, t('report.detailsHint'))
  const error = h('p', { class: 'field-error', id: 'report-details-error', hidden: true })
  return h(
    'div',
    { class: 'field' },
    h('label', { for: 'report-details' }, t('report.details')),
    hint,
    h('textarea', { id: 'report-details', name: 'details', rows: '4', maxlength: '1000', 'aria-describedby': `${hint.id} ${error.id}` }),
    error,
  )
}

export function reportScreen(notice?: string): void {
  const given = new URLSearchParams(location.search).get('code') ?? ''
  const link = CODE.test(given) ? `${location.origin}/r/${given}` : ''
  screen(
    t('nav.report'),
    notice,
    h('p', {}, t('report.intro')),
    form(
      t('nav.report'),
      [
        field(t('report.link'), 'link', { required: true, value: link, hint: t('report.linkHint'), autocomplete: 'off' }),
        reasonField(),
        detailsField(),
      ],
      t('report.submit'),
      async (data) => {
        const typed = value(data, 'link').trim()
        const body = { ...(CODE.test(typed) ? { code: typed } : { url: typed }), reason: value(data, 'reason') || null, details: value(data, 'details') || null }
        try {
          await post('/reports', body)
        } catch (err) {
          // The API names the field it was given (code or url): both are this form's "link".
          if (err instanceof ApiError) {
            const onLink = err.fields.code ?? err.fields.url ?? (err.code === 'LINK_NOT_FOUND' ? t('report.noSuchLink') : undefined)
            if (onLink !== undefined) err.fields.link = onLink
          }
          throw err
        }
        screen(t('report.sent'), undefined, h('p', { role: 'status' }, t('report.thanks')), h('p', {}, h('a', { href: '/app/report', 'data-nav': true }, t('report.another'))))
      },
    ),
  )
}
