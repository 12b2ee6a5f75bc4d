// Create a link and edit one: the URL, custom code (create only), expiry and tags, with the rest
// (password, start, visit cap, preview card) folded under "More options" so the simple case stays simple.
import { get, patch, post, type Link } from './api.js'
import { bulkPanel } from './bulk-paste.js'
import { experimentBody, experimentFields } from './experiment.js'
import { h } from './dom.js'
import { field, form, value } from './forms.js'
import { fromLocalInput, localInput } from './format.js'
import { loading, screen } from './layout.js'
import { restoreDraft } from './resume.js'
import { navigate } from './router.js'

const EXPIRY_HINT = 'Optional. In your time zone; after it the short URL answers "expired". Leave empty for no expiry.'
const TAGS_HINT = 'Optional. Up to 10, separated by commas, each 1 to 32 characters; "Sale" and "sale" are one tag.'

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
    h('legend', {}, 'Who can visit, and when'),
    field(protectedNow ? 'New password' : 'Password', 'password', {
      type: 'password',
      autocomplete: 'new-password',
      hint: protectedNow ? 'The link has a password. Type a new one to replace it; leave empty to keep it.' : 'Optional. 8 to 128 characters; visitors type it before they are sent on. It is never shown again.',
    }),
    protectedNow ? h('label', { class: 'choice' }, h('input', { type: 'checkbox', name: 'remove_password' }), 'Remove the password') : null,
    field('Starts', 'starts_at', { type: 'datetime-local', value: local(link?.starts_at ?? null), hint: 'Optional. In your time zone; before it the short URL answers as if it did not exist.' }),
    field('Visit limit', 'max_visits', {
      inputmode: 'numeric',
      value: link?.max_visits == null ? '' : String(link.max_visits),
      hint: 'Optional. After this many visits the short URL answers "used up". Leave empty for no limit.',
    }),
  )
  const card = h(
    'fieldset',
    { class: 'group' },
    h('legend', {}, 'Preview card'),
    h('p', { class: 'hint' }, 'What chat apps and social sites show for the short URL. Nothing is fetched to fill it in.'),
    field('Title', 'title', { maxlength: '200', value: link?.title ?? '' }),
    field('Description', 'description', { rows: '3', maxlength: '500', value: link?.description ?? '' }),
    field('Image', 'image_url', { type: 'url', inputmode: 'url', placeholder: 'https://example.com/card.png', value: link?.image_url ?? '', hint: 'The https address of the image.' }),
  )
  const set = link !== undefined && (link.password_protected || link.starts_at !== null || link.max_visits !== null || link.title !== null || link.description !== null || link.image_url !== null)
  return h('details', { class: 'more', open: set }, h('summary', {}, 'More options: password, start, visit limit, preview card'), access, card)
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
    'New link',
    [
      field('URL', 'url', { type: 'url', required: true, inputmode: 'url', placeholder: 'https://example.com/page', hint: 'An http or https address, up to 4096 bytes.' }),
      field('Custom code', 'code', { hint: 'Optional. Exactly 8 letters or digits (A-Z, a-z, 0-9); leave empty for a random one.', maxlength: '8', autocomplete: 'off' }),
      field('Expiry', 'expires_at', { type: 'datetime-local', hint: EXPIRY_HINT }),
      field('Tags', 'tags', { hint: TAGS_HINT, autocomplete: 'off' }),
      moreOptions(),
      experimentFields(),
    ],
    'Create link',
    async (data) => {
      const body: Record<string, unknown> = { url: value(data, 'url'), ...options(data), ...experimentBody(data) }
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
      field('Expiry', 'expires_at', { type: 'datetime-local', value: local(link.expires_at), hint: EXPIRY_HINT }),
      field('Tags', 'tags', { value: link.tags.join(', '), hint: TAGS_HINT, autocomplete: 'off' }),
      moreOptions(link),
      experimentFields(link),
    ],
    'Save changes',
    async (data) => {
      await patch<Link>(`/links/${code}`, { url: value(data, 'url'), expires_at: fromLocalInput(value(data, 'expires_at')), ...options(data, link), ...experimentBody(data, link) })
      navigate(`/app/links/${code}`, 'Saved. Redirects use the change at once.', true)
    },
  )
  screen(`Edit ${code}`, notice, h('p', { class: 'muted' }, link.short_url), el, h('p', {}, h('a', { href: `/app/links/${code}`, 'data-nav': true }, `Back to ${code}`)))
  restoreDraft(el)
}
