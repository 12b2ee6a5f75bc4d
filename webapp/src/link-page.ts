// One link: its facts (limits, password, tags and preview card included), visits per day (humans and bots), who visits (devices, browsers, OS,
// countries), referrers, the statistics as CSV, and its QR code to download.
import { act, blob, get, type Link, type Stats } from './api.js'
import { breakdownChart, dayChart } from './chart.js'
import { experimentPanel } from './experiment.js'
import { h } from './dom.js'
import { number, when } from './format.js'
import { healthLine } from './health-badge.js'
import { hostLine } from './hosts.js'
import { language, t, tNodes } from './i18n.js'
import { loading, screen } from './layout.js'
import { deleteButton, expiry, notStarted, stopped, tagChips, visitsLeft } from './links-screen.js'
import { navigate } from './router.js'
import { copyButton, downloadButton } from './widgets.js'

/** "other" → "Other"; bowser's family names are shown as they are ("iOS"). */
const family = (name: string) => (name === 'other' ? t('stats.other') : name)
const DEVICES: Record<string, string> = { desktop: 'device.desktop', mobile: 'device.mobile', tablet: 'device.tablet', other: 'stats.other' }
const device = (name: string) => (DEVICES[name] === undefined ? name : t(DEVICES[name]!))
/** "US" → "United States (US)" in the app's language; "unknown" → "Unknown". */
function country(code: string): string {
  if (code === 'unknown') return t('stats.unknown')
  try {
    return `${new Intl.DisplayNames([language()], { type: 'region' }).of(code) ?? code} (${code})`
  } catch {
    return code
  }
}

/** The card link previews show; the image is named, not loaded (the app fetches nothing from elsewhere). */
function previewCard(link: Link): HTMLElement {
  if (link.title === null && link.description === null && link.image_url === null) return h('p', { class: 'muted' }, t('card.none'))
  const row = (name: string, text: string | null) => h('div', {}, h('dt', {}, name), h('dd', {}, text ?? t('none')))
  return h('section', { class: 'card', 'aria-labelledby': 'card' }, h('h3', { id: 'card' }, t('card.title')), h('dl', {}, row(t('field.title'), link.title), row(t('field.description'), link.description), row(t('field.image'), link.image_url)))
}

/** Asks for a check now and shows the page again with what it found. */
function checkButton(code: string): HTMLButtonElement {
  const button = h('button', { type: 'button' }, t('check.now'))
  button.addEventListener('click', async () => {
    button.disabled = true
    button.textContent = t('check.running')
    try {
      await act('POST', `/links/${code}/check`)
      await linkScreen(code, t('check.done'))
    } finally {
      button.disabled = false
      button.textContent = t('check.now')
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
      h('h2', { id: 'about' }, t('link.title')),
      h('div', { class: 'short' }, h('a', { href: link.short_url, class: 'code', rel: 'noreferrer' }, link.short_url), copyButton(link.short_url, t('copy.shortUrl'))),
      h('p', { class: 'target' }, ...tNodes('link.goesTo', { url: h('a', { href: link.url, rel: 'noreferrer', dir: 'ltr' }, link.url) })),
      hostLine(link.url),
      h(
        'dl',
        { class: 'facts' },
        h('div', {}, h('dt', {}, t('fact.visits')), h('dd', {}, number(link.visits))),
        h('div', {}, h('dt', {}, t('fact.lastVisit')), h('dd', {}, link.last_visited_at === null ? t('fact.noneYet') : when(link.last_visited_at))),
        h('div', {}, h('dt', {}, t('fact.created')), h('dd', {}, when(link.created_at))),
        h('div', {}, h('dt', {}, t('fact.expiry')), h('dd', { class: stopped(link) ? 'warn' : '' }, expiry(link))),
        h('div', {}, h('dt', {}, t('fact.starts')), h('dd', {}, link.starts_at === null ? t('starts.atOnce') : notStarted(link) ? when(link.starts_at) : t('starts.started', { when: when(link.starts_at) }))),
        h('div', {}, h('dt', {}, t('fact.limit')), h('dd', { class: link.visits_left === 0 ? 'warn' : '' }, link.max_visits === null ? t('none') : visitsLeft(link))),
        h('div', {}, h('dt', {}, t('field.password')), h('dd', {}, link.password_protected ? t('fact.passwordRequired') : t('none'))),
        h('div', {}, h('dt', {}, t('fact.health')), h('dd', {}, healthLine(link.health))),
      ),
      tagChips(link),
      previewCard(link),
      h(
        'div',
        { class: 'actions' },
        link.disabled ? null : h('a', { class: 'button', href: `/app/links/${code}/edit`, 'data-nav': true }, t('edit')),
        checkButton(code),
        deleteButton(link, () => navigate('/app/links', t('delete.doneNotice', { code }), true)),
      ),
    ),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'visits' },
      h('h2', { id: 'visits' }, t('visits.title')),
      h('p', {}, t('visits.summary', { count: stats.total, humans: stats.humans, bots: stats.bots })),
      dayChart(stats.days),
      h('div', { class: 'actions' }, downloadButton(t('visits.csv'), `/links/${code}/stats?format=csv`, `${code}-${stats.from}-${stats.to}.csv`)),
    ),
    experimentPanel(link, stats, link.short_url.slice(0, -`/r/${code}`.length)),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'audience' },
      h('h2', { id: 'audience' }, t('audience.title')),
      h('p', { class: 'muted' }, t('audience.text')),
      h(
        'div',
        { class: 'breakdowns' },
        breakdownChart('devices', stats.devices, device),
        breakdownChart('browsers', stats.browsers, family),
        breakdownChart('os', stats.os, family),
        breakdownChart('countries', stats.countries, country),
      ),
    ),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'referrers' },
      h('h2', { id: 'referrers' }, t('referrers.title')),
      stats.referrers.length === 0
        ? h('p', { class: 'muted' }, t('referrers.none'))
        : h('ol', { class: 'referrers' }, ...stats.referrers.map((r) => h('li', {}, h('span', {}, r.host === 'direct' ? t('referrers.direct') : r.host), h('span', { class: 'num' }, number(r.visits))))),
    ),
    h(
      'section',
      { class: 'panel qr', 'aria-labelledby': 'qr' },
      h('h2', { id: 'qr' }, t('qr.title')),
      h('img', { src: qrUrl, alt: t('qr.alt', { url: link.short_url }), width: '192', height: '192' }),
      h('a', { class: 'button', href: qrUrl, download: `${code}.svg` }, t('qr.download')),
    ),
  )
}
