// "Report a link": anyone, signed in or not, tells the operator about a link that leads to
// phishing, malware or spam (POST /api/v1/reports). Reached from the service's pages for a stopped
// or unknown link with ?code=..., which fills in the link.
import { ApiError, post } from './api.js'
import { h } from './dom.js'
import { field, form, value } from './forms.js'
import { screen } from './layout.js'

const CODE = /^[0-9A-Za-z]{8}$/
const REASONS: Array<[string, string]> = [
  ['phishing', 'Phishing: it imitates a site to steal passwords, card numbers or other data'],
  ['malware', 'Malware: it downloads or installs harmful software'],
  ['spam', 'Spam: it was sent unasked, in bulk'],
  ['other', 'Something else (say what below)'],
]

function reasonField(): HTMLElement {
  const error = h('p', { class: 'field-error', id: 'report-reason-error', hidden: true })
  return h(
    'fieldset',
    { class: 'field choices', 'aria-describedby': error.id },
    h('legend', {}, 'What is wrong with it?'),
    ...REASONS.map(([reason, text]) =>
      h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'reason', value: reason, required: true, id: `report-reason-${reason}` }), text),
    ),
    error,
  )
}

function detailsField(): HTMLElement {
  const hint = h('p', { class: 'hint', id: 'report-details-hint' }, 'Optional, up to 1000 characters: where you met the link, what the page asked for.')
  const error = h('p', { class: 'field-error', id: 'report-details-error', hidden: true })
  return h(
    'div',
    { class: 'field' },
    h('label', { for: 'report-details' }, 'Details'),
    hint,
    h('textarea', { id: 'report-details', name: 'details', rows: '4', maxlength: '1000', 'aria-describedby': `${hint.id} ${error.id}` }),
    error,
  )
}

export function reportScreen(notice?: string): void {
  const given = new URLSearchParams(location.search).get('code') ?? ''
  const link = CODE.test(given) ? `${location.origin}/r/${given}` : ''
  screen(
    'Report a link',
    notice,
    h('p', {}, 'If a short link of this service leads to phishing, malware or spam, tell the operator. No account is needed: the operator sees the link, the reason and what you write here, not who you are.'),
    form(
      'Report a link',
      [
        field('Short link', 'link', { required: true, value: link, hint: 'The short link as you got it, such as https://sho.rt/r/aZ3kP9qR, or its 8-character code.', autocomplete: 'off' }),
        reasonField(),
        detailsField(),
      ],
      'Send report',
      async (data) => {
        const typed = value(data, 'link').trim()
        const body = { ...(CODE.test(typed) ? { code: typed } : { url: typed }), reason: value(data, 'reason') || null, details: value(data, 'details') || null }
        try {
          await post('/reports', body)
        } catch (err) {
          // The API names the field it was given (code or url): both are this form's "link".
          if (err instanceof ApiError) {
            const onLink = err.fields.code ?? err.fields.url ?? (err.code === 'LINK_NOT_FOUND' ? 'There is no such link: check what you typed.' : undefined)
            if (onLink !== undefined) err.fields.link = onLink
          }
          throw err
        }
        screen('Report sent', undefined, h('p', { role: 'status' }, 'Thank you. The operator will look at the link and stop it if it is abuse.'), h('p', {}, h('a', { href: '/app/report', 'data-nav': true }, 'Report another link')))
      },
    ),
  )
}
