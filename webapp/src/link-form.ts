// Create a link (URL, optional custom code, optional expiry) and edit one (URL, expiry).
import { get, patch, post, type Link } from './api.js'
import { bulkPanel } from './bulk-paste.js'
import { h } from './dom.js'
import { field, form, value } from './forms.js'
import { fromLocalInput, localInput } from './format.js'
import { loading, screen } from './layout.js'
import { restoreDraft } from './resume.js'
import { navigate } from './router.js'

const EXPIRY_HINT = 'Optional. In your time zone; after it the short URL answers "expired". Leave empty for no expiry.'

export function createScreen(notice?: string): void {
  const el = form(
    'New link',
    [
      field('URL', 'url', { type: 'url', required: true, inputmode: 'url', placeholder: 'https://example.com/page', hint: 'An http or https address, up to 4096 bytes.' }),
      field('Custom code', 'code', { hint: 'Optional. Exactly 8 letters or digits (A-Z, a-z, 0-9); leave empty for a random one.', maxlength: '8', autocomplete: 'off' }),
      field('Expiry', 'expires_at', { type: 'datetime-local', hint: EXPIRY_HINT }),
    ],
    'Create link',
    async (data) => {
      const body: Record<string, unknown> = { url: value(data, 'url') }
      if (value(data, 'code') !== '') body.code = value(data, 'code')
      const expires = fromLocalInput(value(data, 'expires_at'))
      if (expires !== null) body.expires_at = expires
      const link = await post<Link>('/links', body)
      navigate(`/app/links/${link.code}`, `Created ${link.short_url}.`, true)
    },
  )
  screen('New link', notice, el, bulkPanel(), h('p', {}, h('a', { href: '/app/links', 'data-nav': true }, 'Back to your links')))
  restoreDraft(el)
}

export async function editScreen(code: string, notice?: string): Promise<void> {
  loading(`Edit ${code}`)
  const link = await get<Link>(`/links/${code}`)
  const el = form(
    `Edit ${code}`,
    [
      field('URL', 'url', { type: 'url', required: true, inputmode: 'url', value: link.url }),
      field('Expiry', 'expires_at', { type: 'datetime-local', value: link.expires_at === null ? '' : localInput(link.expires_at), hint: EXPIRY_HINT }),
    ],
    'Save changes',
    async (data) => {
      await patch<Link>(`/links/${code}`, { url: value(data, 'url'), expires_at: fromLocalInput(value(data, 'expires_at')) })
      navigate(`/app/links/${code}`, 'Saved. Redirects use the change at once.', true)
    },
  )
  screen(`Edit ${code}`, notice, h('p', { class: 'muted' }, link.short_url), el, h('p', {}, h('a', { href: `/app/links/${code}`, 'data-nav': true }, `Back to ${code}`)))
  restoreDraft(el)
}
