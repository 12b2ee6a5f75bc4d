// Create a link and edit one: the URL, custom code (create only), expiry and tags, with the rest
// (password, start, visit cap, preview card) folded under "More options" so the simple case stays simple.
import { get, patch, post, type Link } from './api.js'
import { bulkPanel } from './bulk-paste.js'
import { experimentBody, experimentFields } from './experiment.js'
import { h } from './dom.js'
import { field, form, value } from './forms.js'
import { fromLocalInput, localInput } from './format.js'
import { t } from './i18n.js'
import { loading, screen } from './layout.js'
import { restoreDraft } from './resume.js'
import { navigate } from './router.js'


/** "a, b,,c " → ["a", "b", "c"] */
export const parseTags = (text: string): string[] =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '')

const local = (iso: string | null) => (iso === null ? '' : localInput(iso))

/** The folded fields; on edit they show the link's values (never its password). */
function moreOptions(link?: Link): HTMLDetailsElement {
  const protectedNow = link?.password_protected === true
  const access = h(
    'fieldset',
    { class: 'group' },
    h('legend', {}, t('form.access')),
    field(protectedNow ? t('field.newPassword') : t('field.password'), 'password', {
      type: 'password',
      autocomplete: 'new-password',
      hint: protectedNow ? t('form.passwordReplaceHint') : t('form.passwordHint'),
    }),
    protectedNow ? h('label', { class: 'choice' }, h('input', { type: 'checkbox', name: 'remove_password' }), t('form.removePassword')) : null,
    field(t('fact.starts'), 'starts_at', { type: 'datetime-local', value: local(link?.starts_at ?? null), hint: t('form.startsHint') }),
    field(t('fact.limit'), 'max_visits', {
      inputmode: 'numeric',
      value: link?.max_visits == null ? '' : String(link.max_visits),
      hint: t('form.limitHint'),
    }),
  )
  const card = h(
    'fieldset',
    { class: 'group' },
    h('legend', {}, t('card.title')),
    h('p', { class: 'hint' }, t('form.cardHint')),
    field(t('field.title'), 'title', { maxlength: '200', value: link?.title ?? '' }),
    field(t('field.description'), 'description', { rows: '3', maxlength: '500', value: link?.description ?? '' }),
    field(t('field.image'), 'image_url', { type: 'url', inputmode: 'url', placeholder: 'https://example.com/card.png', value: link?.image_url ?? '', hint: t('form.imageHint') }),
  )
  const set = link !== undefined && (link.password_protected || link.starts_at !== null || link.max_visits !== null || link.title !== null || link.description !== null || link.image_url !== null)
  return h('details', { class: 'more', open: set }, h('summary', {}, t('form.more')), access, card)
}

/**
 * The optional fields as the API takes them. On create, empty ones are left out; on edit, the
 * start and the cap only when changed, since a new cap recounts the visits left.
 */
function options(data: FormData, link?: Link): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  const cap = value(data, 'max_visits').trim()
  const unchanged = new Set<string>()
  if (link !== undefined && value(data, 'starts_at') === local(link.starts_at)) unchanged.add('starts_at')
  if (link !== undefined && cap === String(link.max_visits ?? '')) unchanged.add('max_visits')
  const fields: Record<string, unknown> = {
    starts_at: fromLocalInput(value(data, 'starts_at')),
    // Anything but digits goes as typed, and the API's 422 says what is wrong with it.
    max_visits: cap === '' ? null : /^\d+$/.test(cap) ? Number(cap) : cap,
    title: value(data, 'title') || null,
    description: value(data, 'description') || null,
    image_url: value(data, 'image_url') || null,
    tags: parseTags(value(data, 'tags')),
  }
  for (const [name, v] of Object.entries(fields)) {
    if (unchanged.has(name)) continue
    if (link !== undefined || (v !== null && !(Array.isArray(v) && v.length === 0))) body[name] = v
  }
  if (value(data, 'password') !== '') body.password = value(data, 'password')
  else if (data.has('remove_password')) body.password = null
  return body
}

export function createScreen(notice?: string): void {
  const el = form(
    t('nav.new'),
    [
      field(t('field.url'), 'url', { type: 'url', required: true, inputmode: 'url', placeholder: 'https://example.com/page', hint: t('form.urlHint') }),
      field(t('form.code'), 'code', { hint: t('form.codeHint'), maxlength: '8', autocomplete: 'off' }),
      field(t('fact.expiry'), 'expires_at', { type: 'datetime-local', hint: t('form.expiryHint') }),
      field(t('form.tags'), 'tags', { hint: t('form.tagsHint'), autocomplete: 'off' }),
      moreOptions(),
      experimentFields(),
    ],
    t('form.create'),
    async (data) => {
      const body: Record<string, unknown> = { url: value(data, 'url'), ...options(data), ...experimentBody(data) }
      if (value(data, 'code') !== '') body.code = value(data, 'code')
      const expires = fromLocalInput(value(data, 'expires_at'))
      if (expires !== null) body.expires_at = expires
      const link = await post<Link>('/links', body)
      navigate(`/app/links/${link.code}`, t('form.created', { url: link.short_url }), true)
    },
  )
  screen(t('nav.new'), notice, el, bulkPanel(), h('p', {}, h('a', { href: '/app/links', 'data-nav': true }, t('form.back'))))
  restoreDraft(el)
}

export async function editScreen(code: string, notice?: string): Promise<void> {
  loading(t('form.editTitle', { code }))
  const link = await get<Link>(`/links/${code}`)
  const el = form(
    t('form.editTitle', { code }),
    [
      field(t('field.url'), 'url', { type: 'url', required: true, inputmode: 'url', value: link.url }),
      field(t('fact.expiry'), 'expires_at', { type: 'datetime-local', value: local(link.expires_at), hint: t('form.expiryHint') }),
      field(t('form.tags'), 'tags', { value: link.tags.join(', '), hint: t('form.tagsHint'), autocomplete: 'off' }),
      moreOptions(link),
      experimentFields(link),
    ],
    t('form.save'),
    async (data) => {
      await patch<Link>(`/links/${code}`, { url: value(data, 'url'), expires_at: fromLocalInput(value(data, 'expires_at')), ...options(data, link), ...experimentBody(data, link) })
      navigate(`/app/links/${code}`, t('form.saved'), true)
    },
  )
  screen(t('form.editTitle', { code }), notice, h('p', { class: 'muted' }, link.short_url), el, h('p', {}, h('a', { href: `/app/links/${code}`, 'data-nav': true }, t('form.backTo', { code }))))
  restoreDraft(el)
}
