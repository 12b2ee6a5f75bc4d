// One link: its facts (limits, password, tags and preview card included), visits per day (humans and bots), who visits (devices, browsers, OS,
// countries), referrers, the statistics as CSV, and its QR code to download.
import { act, blob, get, type Link, type Stats } from './api.js'
import { breakdownChart, dayChart } from './chart.js'
import { h } from './dom.js'
import { counted, number, when } from './format.js'
import { healthLine } from './health-badge.js'
import { hostLine } from './hosts.js'
import { loading, screen } from './layout.js'
import { deleteButton, expiry, notStarted, stopped, tagChips, visitsLeft } from './links-screen.js'
import { navigate } from './router.js'
import { copyButton, downloadButton } from './widgets.js'

/** "other" → "Other"; bowser's family names are shown as they are ("iOS"). */
const family = (name: string) => (name === 'other' ? 'Other' : name)
const device = (name: string) => name.charAt(0).toUpperCase() + name.slice(1)
const regions = new Intl.DisplayNames(['en'], { type: 'region' })
/** "US" → "United States (US)"; "unknown" → "Unknown". */
function country(code: string): string {
  if (code === 'unknown') return 'Unknown'
  try {
    return `${regions.of(code) ?? code} (${code})`
  } catch {
    return code
  }
}

/** The card link previews show; the image is named, not loaded (the app fetches nothing from elsewhere). */
function previewCard(link: Link): HTMLElement {
  if (link.title === null && link.description === null && link.image_url === null) return h('p', { class: 'muted' }, 'No preview card: chat apps and social sites show what they find at the target.')
  const row = (name: string, text: string | null) => h('div', {}, h('dt', {}, name), h('dd', {}, text ?? 'None'))
  return h('section', { class: 'card', 'aria-labelledby': 'card' }, h('h3', { id: 'card' }, 'Preview card'), h('dl', {}, row('Title', link.title), row('Description', link.description), row('Image', link.image_url)))
}

/** Asks for a check now and shows the page again with what it found. */
function checkButton(code: string): HTMLButtonElement {
  const button = h('button', { type: 'button' }, 'Check now')
  button.addEventListener('click', async () => {
    button.disabled = true
    button.textContent = 'Checking…'
    try {
      await act('POST', `/links/${code}/check`)
      await linkScreen(code, 'Checked its destination.')
    } finally {
      button.disabled = false
      button.textContent = 'Check now'
    }
  })
  return button
}

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
        h('div', {}, h('dt', {}, 'Starts'), h('dd', {}, link.starts_at === null ? 'At once' : notStarted(link) ? when(link.starts_at) : `Started ${when(link.starts_at)}`)),
        h('div', {}, h('dt', {}, 'Visit limit'), h('dd', { class: link.visits_left === 0 ? 'warn' : '' }, link.max_visits === null ? 'None' : visitsLeft(link))),
        h('div', {}, h('dt', {}, 'Password'), h('dd', {}, link.password_protected ? 'Required: visitors type it first' : 'None')),
        h('div', {}, h('dt', {}, 'Health'), h('dd', {}, healthLine(link.health))),
      ),
      tagChips(link),
      previewCard(link),
      h(
        'div',
        { class: 'actions' },
        link.disabled ? null : h('a', { class: 'button', href: `/app/links/${code}/edit`, 'data-nav': true }, 'Edit'),
        checkButton(code),
        deleteButton(link, () => navigate('/app/links', `Deleted ${code}.`, true)),
      ),
    ),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'visits' },
      h('h2', { id: 'visits' }, 'Visits, last 30 days'),
      h('p', {}, `${counted(stats.total, 'visit', 'visits')}: ${number(stats.humans)} by people, ${number(stats.bots)} by bots and link previews.`),
      dayChart(stats.days),
      h('div', { class: 'actions' }, downloadButton('Download statistics (CSV)', `/links/${code}/stats?format=csv`, `${code}-${stats.from}-${stats.to}.csv`)),
    ),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'audience' },
      h('h2', { id: 'audience' }, 'Who visits'),
      h('p', { class: 'muted' }, 'Visits by people in the last 30 days, from their browser and address; bots are left out. No address is stored.'),
      h(
        'div',
        { class: 'breakdowns' },
        breakdownChart('Devices', stats.devices, device),
        breakdownChart('Browsers', stats.browsers, family),
        breakdownChart('Operating systems', stats.os, family),
        breakdownChart('Countries', stats.countries, country),
      ),
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
