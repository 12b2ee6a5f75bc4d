// The links list: a filter by tag and by text (kept in the address, so a reload keeps it), then
// each link's short URL with a copy button, target, tags, visits with a 30-day sparkline,
// created and expiry, its limits, and its actions.
import { act, get, HEALTH_STATUSES, type Link, type Stats, type Tag } from './api.js'
import { sparkline } from './chart.js'
import { announce, h } from './dom.js'
import { expired, number, when } from './format.js'
import { healthBadge, healthLabel } from './health-badge.js'
import { hostLine } from './hosts.js'
import { t } from './i18n.js'
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
  loading(t('links.title'))
  const params = new URLSearchParams(location.search)
  const tag = params.get('tag') ?? ''
  const q = params.get('q') ?? ''
  const health = (HEALTH_STATUSES as readonly string[]).includes(params.get('health') ?? '') ? params.get('health')! : ''
  // The API's filter takes the same query as the app's address.
  const query = listPath(tag, q, health).replace('/app/links', '')
  const [{ links }, { tags }] = await Promise.all([get<{ links: Link[] }>(`/links${query}`), get<{ tags: Tag[] }>('/tags')])
  const newLink = h('a', { class: 'button primary', href: '/app/links/new', 'data-nav': true }, t('nav.new'))
  const filtered = tag !== '' || q !== '' || health !== ''
  if (links.length === 0 && !filtered) {
    screen(t('links.title'), notice, h('div', { class: 'empty' }, h('p', {}, t('links.none')), newLink))
    return
  }
  const csv = downloadButton(t('links.csv'), '/links?format=csv', 'links.csv')
  const count = filtered ? t('links.matching', { count: links.length }) : t('links.ofMax', { count: links.length, max: 50 })
  screen(
    t('links.title'),
    notice,
    filterForm(tags, tag, q, health),
    h('p', { class: 'toolbar' }, h('span', { class: 'muted' }, count), h('span', { class: 'actions' }, csv, newLink)),
    links.length === 0
      ? h('div', { class: 'empty' }, h('p', {}, t('links.noMatch')), h('a', { href: '/app/links', 'data-nav': true }, t('links.showAll')))
      : h('ul', { class: 'links' }, ...links.map(linkItem)),
  )
}

/** A tag (from GET /tags, with counts), a search and a health; applying it changes the address. */
function filterForm(tags: Tag[], tag: string, q: string, health: string): HTMLFormElement {
  const select = h(
    'select',
    { id: 'filter-tag', name: 'tag' },
    h('option', { value: '' }, t('filter.allTags')),
    ...tags.map((t) => h('option', { value: t.tag, selected: t.tag.toLowerCase() === tag.toLowerCase() }, `${t.tag} (${number(t.links)})`)),
  )
  // A tag from an old address that no link carries any more still shows as chosen.
  if (tag !== '' && select.value === '') select.append(h('option', { value: tag, selected: true }, `${tag} (0)`))
  const search = h('input', { id: 'filter-q', name: 'q', type: 'search', value: q, placeholder: t('filter.placeholder') })
  const healthSelect = h(
    'select',
    { id: 'filter-health', name: 'health' },
    h('option', { value: '' }, t('filter.anyHealth')),
    ...HEALTH_STATUSES.map((s) => h('option', { value: s, selected: s === health }, healthLabel(s))),
  )
  const el = h(
    'form',
    { class: 'filter', role: 'search', 'aria-label': t('filter.label') },
    h('div', { class: 'field' }, h('label', { for: select.id }, t('filter.tag')), select),
    h('div', { class: 'field' }, h('label', { for: search.id }, t('filter.search')), search),
    h('div', { class: 'field' }, h('label', { for: healthSelect.id }, t('filter.health')), healthSelect),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('filter.submit')), tag !== '' || q !== '' || health !== '' ? h('a', { href: '/app/links', 'data-nav': true }, t('filter.clear')) : null),
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
    : h('ul', { class: 'tags', 'aria-label': t('tags.of', { code: link.code }) }, ...link.tags.map((tag) => h('li', {}, h('a', { href: listPath(tag, ''), 'data-nav': true, 'aria-label': t('tags.links', { tag }) }, tag))))

/** "2 of 3 left", "Used up (3 of 3)" */
export const visitsLeft = (link: Link): string =>
  link.visits_left === 0 ? t('limit.usedUp', { count: link.max_visits ?? 0 }) : t('limit.left', { count: link.visits_left ?? 0, max: link.max_visits ?? 0 })

/** Not started yet (by this device's clock). */
export const notStarted = (link: Link): boolean => link.starts_at !== null && Date.parse(link.starts_at) > Date.now()

export const expiry = (link: Link): string =>
  link.disabled
    ? link.health.status === 'flagged' ? t('expiry.flagged') : t('expiry.disabled')
    : link.expires_at === null
      ? t('expiry.never')
      : t(expired(link.expires_at) ? 'expiry.expired' : 'expiry.expires', { when: when(link.expires_at) })

/** The link no longer redirects: expired, or disabled by the operator. */
export const stopped = (link: Link): boolean => link.disabled || (link.expires_at !== null && expired(link.expires_at))

export const deleteButton = (link: Link, after: () => void): HTMLButtonElement =>
  confirmDialog({
    trigger: t('delete'),
    label: t('delete.label', { code: link.code }),
    title: t('delete.title', { code: link.code }),
    text: t('delete.text', { url: link.short_url, code: link.code }),
    confirm: t('delete.confirm'),
    action: async () => {
      await act('DELETE', `/links/${link.code}`)
      announce(t('delete.done', { code: link.code }))
      after()
    },
  })

function linkItem(link: Link): HTMLLIElement {
  const spark = h('span', { class: 'spark' })
  // Each sparkline is its own request; the list shows at once and they fill in.
  get<Stats>(`/links/${link.code}/stats`).then(
    (stats) => spark.replaceChildren(sparkline(stats.days)),
    () => spark.replaceChildren(h('span', { class: 'muted' }, t('chart.none'))),
  )
  return h(
    'li',
    { class: 'link-card' },
    h('div', { class: 'short' }, h('a', { href: `/app/links/${link.code}`, 'data-nav': true, class: 'code' }, link.short_url), copyButton(link.short_url, t('copy.shortUrlOf', { code: link.code }))),
    h('p', { class: 'target', title: link.url }, h('bdi', {}, link.url)),
    hostLine(link.url),
    tagChips(link),
    h(
      'dl',
      { class: 'facts' },
      h('div', {}, h('dt', {}, t('fact.visits')), h('dd', {}, number(link.visits), spark)),
      h('div', {}, h('dt', {}, t('fact.created')), h('dd', {}, when(link.created_at))),
      h('div', {}, h('dt', {}, t('fact.expiry')), h('dd', { class: stopped(link) ? 'warn' : '' }, expiry(link))),
      h('div', {}, h('dt', {}, t('fact.health')), h('dd', {}, healthBadge(link.health))),
      notStarted(link) ? h('div', {}, h('dt', {}, t('fact.starts')), h('dd', {}, when(link.starts_at!))) : null,
      link.max_visits === null ? null : h('div', {}, h('dt', {}, t('fact.limit')), h('dd', { class: link.visits_left === 0 ? 'warn' : '' }, visitsLeft(link))),
      link.password_protected ? h('div', {}, h('dt', {}, t('field.password')), h('dd', {}, t('fact.required'))) : null,
    ),
    h(
      'div',
      { class: 'actions' },
      h('a', { class: 'button', href: `/app/links/${link.code}`, 'data-nav': true, 'aria-label': t('details.label', { code: link.code }) }, t('details')),
      // A disabled link may not be edited (403 LINK_DISABLED), only deleted.
      link.disabled ? null : h('a', { class: 'button', href: `/app/links/${link.code}/edit`, 'data-nav': true, 'aria-label': t('edit.label', { code: link.code }) }, t('edit')),
      deleteButton(link, () => navigate('/app/links', t('delete.doneNotice', { code: link.code }), true)),
    ),
  )
}
