// The links list: each link's short URL with a copy button, target, visits with a 30-day
// sparkline, created and expiry, and its actions.
import { act, get, type Link, type Stats } from './api.js'
import { sparkline } from './chart.js'
import { announce, h } from './dom.js'
import { expired, number, when } from './format.js'
import { hostLine } from './hosts.js'
import { loading, screen } from './layout.js'
import { navigate } from './router.js'
import { confirmDialog, copyButton, downloadButton } from './widgets.js'

export async function linksScreen(notice?: string): Promise<void> {
  loading('Your links')
  const { links } = await get<{ links: Link[] }>('/links')
  const newLink = h('a', { class: 'button primary', href: '/app/links/new', 'data-nav': true }, 'New link')
  if (links.length === 0) {
    screen('Your links', notice, h('div', { class: 'empty' }, h('p', {}, 'You have no links yet.'), newLink))
    return
  }
  const csv = downloadButton('Download CSV', '/links?format=csv', 'links.csv')
  screen('Your links', notice, h('p', { class: 'toolbar' }, h('span', { class: 'muted' }, `${links.length} of 50 links`), h('span', { class: 'actions' }, csv, newLink)), h('ul', { class: 'links' }, ...links.map(linkItem)))
}

export const expiry = (link: Link): string =>
  link.disabled
    ? 'Disabled by the operator'
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
    h(
      'dl',
      { class: 'facts' },
      h('div', {}, h('dt', {}, 'Visits'), h('dd', {}, number(link.visits), spark)),
      h('div', {}, h('dt', {}, 'Created'), h('dd', {}, when(link.created_at))),
      h('div', {}, h('dt', {}, 'Expiry'), h('dd', { class: stopped(link) ? 'warn' : '' }, expiry(link))),
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
