// The links list: a filter by tag and by text (kept in the address, so a reload keeps it), then
// each link's short URL with a copy button, target, tags, visits with a 30-day sparkline,
// created and expiry, its limits, and its actions.
import { act, get, HEALTH_STATUSES, type Link, type Stats, type Tag } from './api.js'
import { sparkline } from './chart.js'
import { announce, h } from './dom.js'
import { expired, number, when } from './format.js'
import { HEALTH_LABELS, healthBadge } from './health-badge.js'
import { hostLine } from './hosts.js'
import { loading, screen } from './layout.js'
import { navigate } from './router.js'
import { confirmDialog, copyButton, downloadButton } from './widgets.js'

/** The list's address for a filter; empty parts are left out. */
export function listPath(tag: string, q: string, health = ''): string {
  const query = new URLSearchParams()
  if (tag !== '') query.set('tag', tag)
  if (q !== '') query.set('q', q)
  if (health !== '') query.set('health', health)
  return query.toString() === '' ? '/app/links' : `/app/links?${query}`
}

export async function linksScreen(notice?: string): Promise<void> {
  loading('Your links')
  const params = new URLSearchParams(location.search)
  const tag = params.get('tag') ?? ''
  const q = params.get('q') ?? ''
  const health = (HEALTH_STATUSES as readonly string[]).includes(params.get('health') ?? '') ? params.get('health')! : ''
  // The API's filter takes the same query as the app's address.
  const query = listPath(tag, q, health).replace('/app/links', '')
  const [{ links }, { tags }] = await Promise.all([get<{ links: Link[] }>(`/links${query}`), get<{ tags: Tag[] }>('/tags')])
  const newLink = h('a', { class: 'button primary', href: '/app/links/new', 'data-nav': true }, 'New link')
  const filtered = tag !== '' || q !== '' || health !== ''
  if (links.length === 0 && !filtered) {
    screen('Your links', notice, h('div', { class: 'empty' }, h('p', {}, 'You have no links yet.'), newLink))
    return
  }
  const csv = downloadButton('Download CSV', '/links?format=csv', 'links.csv')
  const count = filtered ? `${links.length} ${links.length === 1 ? 'link matches' : 'links match'}` : `${links.length} of 50 links`
  screen(
    'Your links',
    notice,
    filterForm(tags, tag, q, health),
    h('p', { class: 'toolbar' }, h('span', { class: 'muted' }, count), h('span', { class: 'actions' }, csv, newLink)),
    links.length === 0
      ? h('div', { class: 'empty' }, h('p', {}, 'No link matches this filter.'), h('a', { href: '/app/links', 'data-nav': true }, 'Show all links'))
      : h('ul', { class: 'links' }, ...links.map(linkItem)),
  )
}

/** A tag (from GET /tags, with counts), a search and a health; applying it changes the address. */
function filterForm(tags: Tag[], tag: string, q: string, health: string): HTMLFormElement {
  const select = h(
    'select',
    { id: 'filter-tag', name: 'tag' },
    h('option', { value: '' }, 'All tags'),
    ...tags.map((t) => h('option', { value: t.tag, selected: t.tag.toLowerCase() === tag.toLowerCase() }, `${t.tag} (${number(t.links)})`)),
  )
  // A tag from an old address that no link carries any more still shows as chosen.
  if (tag !== '' && select.value === '') select.append(h('option', { value: tag, selected: true }, `${tag} (0)`))
  const search = h('input', { id: 'filter-q', name: 'q', type: 'search', value: q, placeholder: 'Part of a URL, code or title' })
  const healthSelect = h(
    'select',
    { id: 'filter-health', name: 'health' },
    h('option', { value: '' }, 'Any health'),
    ...HEALTH_STATUSES.map((s) => h('option', { value: s, selected: s === health }, HEALTH_LABELS[s])),
  )
  const el = h(
    'form',
    { class: 'filter', role: 'search', 'aria-label': 'Filter links' },
    h('div', { class: 'field' }, h('label', { for: select.id }, 'Tag'), select),
    h('div', { class: 'field' }, h('label', { for: search.id }, 'Search'), search),
    h('div', { class: 'field' }, h('label', { for: healthSelect.id }, 'Health'), healthSelect),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Filter'), tag !== '' || q !== '' || health !== '' ? h('a', { href: '/app/links', 'data-nav': true }, 'Clear') : null),
  )
  el.addEventListener('submit', (ev) => {
    ev.preventDefault()
    navigate(listPath(select.value, search.value.trim(), healthSelect.value))
  })
  return el
}

/** The link's tags as chips, each a link to the list filtered by it. */
export const tagChips = (link: Link): HTMLElement | null =>
  link.tags.length === 0
    ? null
    : h('ul', { class: 'tags', 'aria-label': `Tags of ${link.code}` }, ...link.tags.map((t) => h('li', {}, h('a', { href: listPath(t, ''), 'data-nav': true, 'aria-label': `Links tagged ${t}` }, t))))

/** "2 of 3 left", "Used up (3 of 3)" */
export const visitsLeft = (link: Link): string =>
  link.visits_left === 0 ? `Used up (${number(link.max_visits ?? 0)} visits)` : `${number(link.visits_left ?? 0)} of ${number(link.max_visits ?? 0)} left`

/** Not started yet (by this device's clock). */
export const notStarted = (link: Link): boolean => link.starts_at !== null && Date.parse(link.starts_at) > Date.now()

export const expiry = (link: Link): string =>
  link.disabled
    ? link.health.status === 'flagged' ? 'Stopped: it leads to a blocked site' : 'Disabled by the operator'
    : link.expires_at === null
      ? 'Never expires'
      : `${expired(link.expires_at) ? 'Expired' : 'Expires'} ${when(link.expires_at)}`

/** The link no longer redirects: expired, or disabled by the operator. */
export const stopped = (link: Link): boolean => link.disabled || (link.expires_at !== null && expired(link.expires_at))

export const deleteButton = (link: Link, after: () => void): HTMLButtonElement =>
  confirmDialog({
    trigger: 'Delete',
    label: `Delete ${link.code}`,
    title: `Delete ${link.code}?`,
    text: `${link.short_url} will stop working at once, and the code ${link.code} can never be used again. Its statistics are deleted too.`,
    confirm: 'Delete link',
    action: async () => {
      await act('DELETE', `/links/${link.code}`)
      announce(`Deleted ${link.code}`)
      after()
    },
  })

function linkItem(link: Link): HTMLLIElement {
  const spark = h('span', { class: 'spark' })
  // Each sparkline is its own request; the list shows at once and they fill in.
  get<Stats>(`/links/${link.code}/stats`).then(
    (stats) => spark.replaceChildren(sparkline(stats.days)),
    () => spark.replaceChildren(h('span', { class: 'muted' }, 'no chart')),
  )
  return h(
    'li',
    { class: 'link-card' },
    h('div', { class: 'short' }, h('a', { href: `/app/links/${link.code}`, 'data-nav': true, class: 'code' }, link.short_url), copyButton(link.short_url, `short URL ${link.code}`)),
    h('p', { class: 'target', title: link.url }, link.url),
    hostLine(link.url),
    tagChips(link),
    h(
      'dl',
      { class: 'facts' },
      h('div', {}, h('dt', {}, 'Visits'), h('dd', {}, number(link.visits), spark)),
      h('div', {}, h('dt', {}, 'Created'), h('dd', {}, when(link.created_at))),
      h('div', {}, h('dt', {}, 'Expiry'), h('dd', { class: stopped(link) ? 'warn' : '' }, expiry(link))),
      h('div', {}, h('dt', {}, 'Health'), h('dd', {}, healthBadge(link.health))),
      notStarted(link) ? h('div', {}, h('dt', {}, 'Starts'), h('dd', {}, when(link.starts_at!))) : null,
      link.max_visits === null ? null : h('div', {}, h('dt', {}, 'Visit limit'), h('dd', { class: link.visits_left === 0 ? 'warn' : '' }, visitsLeft(link))),
      link.password_protected ? h('div', {}, h('dt', {}, 'Password'), h('dd', {}, 'Required')) : null,
    ),
    h(
      'div',
      { class: 'actions' },
      h('a', { class: 'button', href: `/app/links/${link.code}`, 'data-nav': true, 'aria-label': `Details of ${link.code}` }, 'Details'),
      // A disabled link may not be edited (403 LINK_DISABLED), only deleted.
      link.disabled ? null : h('a', { class: 'button', href: `/app/links/${link.code}/edit`, 'data-nav': true, 'aria-label': `Edit ${link.code}` }, 'Edit'),
      deleteButton(link, () => navigate('/app/links', `Deleted ${link.code}.`, true)),
    ),
  )
}
