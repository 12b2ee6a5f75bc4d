// One link: its facts, visits per day (humans and bots), referrers, and its QR code to download.
import { blob, get, type Link, type Stats } from './api.js'
import { dayChart } from './chart.js'
import { h } from './dom.js'
import { counted, number, when } from './format.js'
import { hostLine } from './hosts.js'
import { loading, screen } from './layout.js'
import { deleteButton, expiry, stopped } from './links-screen.js'
import { navigate } from './router.js'
import { copyButton } from './widgets.js'

// The QR image is fetched with the token (an <img src> cannot send one) and shown from a blob:
// URL; the previous page's URL is released when the next one is made.
let qrUrl: string | undefined

export async function linkScreen(code: string, notice?: string): Promise<void> {
  loading(code)
  const [link, stats, qr] = await Promise.all([get<Link>(`/links/${code}`), get<Stats>(`/links/${code}/stats`), blob(`/links/${code}/qr?size=512`)])
  if (qrUrl !== undefined) URL.revokeObjectURL(qrUrl)
  qrUrl = URL.createObjectURL(qr)
  screen(
    code,
    notice,
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'about' },
      h('h2', { id: 'about' }, 'Link'),
      h('div', { class: 'short' }, h('a', { href: link.short_url, class: 'code', rel: 'noreferrer' }, link.short_url), copyButton(link.short_url, 'short URL')),
      h('p', { class: 'target' }, 'Goes to ', h('a', { href: link.url, rel: 'noreferrer' }, link.url)),
      hostLine(link.url),
      h(
        'dl',
        { class: 'facts' },
        h('div', {}, h('dt', {}, 'Visits'), h('dd', {}, number(link.visits))),
        h('div', {}, h('dt', {}, 'Last visit'), h('dd', {}, link.last_visited_at === null ? 'None yet' : when(link.last_visited_at))),
        h('div', {}, h('dt', {}, 'Created'), h('dd', {}, when(link.created_at))),
        h('div', {}, h('dt', {}, 'Expiry'), h('dd', { class: stopped(link) ? 'warn' : '' }, expiry(link))),
      ),
      h(
        'div',
        { class: 'actions' },
        link.disabled ? null : h('a', { class: 'button', href: `/app/links/${code}/edit`, 'data-nav': true }, 'Edit'),
        deleteButton(link, () => navigate('/app/links', `Deleted ${code}.`, true)),
      ),
    ),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'visits' },
      h('h2', { id: 'visits' }, 'Visits, last 30 days'),
      h('p', {}, `${counted(stats.total, 'visit', 'visits')}: ${number(stats.humans)} by people, ${number(stats.bots)} by bots and link previews.`),
      dayChart(stats.days),
    ),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'referrers' },
      h('h2', { id: 'referrers' }, 'Referrers'),
      stats.referrers.length === 0
        ? h('p', { class: 'muted' }, 'No visits in these 30 days.')
        : h('ol', { class: 'referrers' }, ...stats.referrers.map((r) => h('li', {}, h('span', {}, r.host === 'direct' ? 'Direct (no referrer)' : r.host), h('span', { class: 'num' }, number(r.visits))))),
    ),
    h(
      'section',
      { class: 'panel qr', 'aria-labelledby': 'qr' },
      h('h2', { id: 'qr' }, 'QR code'),
      h('img', { src: qrUrl, alt: `QR code of ${link.short_url}`, width: '192', height: '192' }),
      h('a', { class: 'button', href: qrUrl, download: `${code}.svg` }, 'Download QR code (SVG)'),
    ),
  )
}
