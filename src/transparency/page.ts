// The transparency report as a page, in the visitor pages' shell and style and in the visitor's
// language: every word from the catalogue's "transparency.*" messages, months, counts and
// durations formatted by Intl in that language.
import type { Messages } from '../web/catalogues.js'
import { escapeHtml, page } from '../web/visitor-pages.js'
import type { MonthFigures } from './queries.js'

const UNITS = [
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
  ['second', 1],
] as const

/** 93784 → "1 day 2 hours", 3700 → "1 hour 1 minute", 42 → "42 seconds" (in `lang`): the two largest units. */
export function duration(seconds: number | null, m: Messages): string {
  if (seconds === null) return m.t('transparency.none')
  let left = Math.round(seconds)
  const counts = UNITS.map(([unit, size]) => {
    const n = Math.floor(left / size)
    left -= n * size
    return [unit, n] as const
  })
  const first = counts.findIndex(([, n]) => n > 0)
  const shown = first === -1 ? counts.slice(3) : counts.slice(first, first + 2).filter(([, n]) => n > 0)
  const parts = shown.map(([unit, n]) => new Intl.NumberFormat(m.lang, { style: 'unit', unit, unitDisplay: 'long' }).format(n))
  return new Intl.ListFormat(m.lang, { type: 'unit', style: 'narrow' }).format(parts)
}

/** "2026-11" → "November 2026", "novembre 2026" → "Novembre 2026" (a heading starts with a capital). */
export function monthName(month: string, m: Messages): string {
  const [year, mm] = month.split('-').map(Number)
  const name = new Intl.DateTimeFormat(m.lang, { year: 'numeric', month: 'long', timeZone: 'UTC' }).format(Date.UTC(year!, mm! - 1, 1))
  return name.charAt(0).toLocaleUpperCase(m.lang) + name.slice(1)
}

export function transparencyPage(months: readonly MonthFigures[], m: Messages): string {
  const count = new Intl.NumberFormat(m.lang)
  const title = m.t('transparency.title')
  const panels = [...months].reverse().map((month) => {
    const figures: Array<[string, string]> = [
      ['transparency.received', count.format(month.reports_received)],
      ['transparency.resolved', count.format(month.reports_resolved)],
      ['transparency.median', duration(month.time_to_action_median_seconds, m)],
      ['transparency.p90', duration(month.time_to_action_p90_seconds, m)],
      ['transparency.operator', count.format(month.links_stopped_by_operator)],
      ['transparency.feeds', count.format(month.links_stopped_by_threat_feeds)],
      ['transparency.health', count.format(month.links_stopped_by_health_checks)],
      ['transparency.accounts', count.format(month.accounts_disabled)],
    ]
    const items = figures.map(([key, value]) => `<div><dt>${escapeHtml(m.t(key))}</dt><dd>${escapeHtml(value)}</dd></div>`).join('')
    const id = `m-${escapeHtml(month.month)}`
    return `<section class="panel" aria-labelledby="${id}"><h2 id="${id}"><time datetime="${escapeHtml(month.month)}">${escapeHtml(monthName(month.month, m))}</time></h2><dl class="figures">${items}</dl></section>`
  })
  return page(
    m,
    title,
    `<h1>${escapeHtml(title)}</h1>
<p class="muted">${escapeHtml(m.t('transparency.intro'))}</p>
<p class="muted">${escapeHtml(m.t('transparency.actionNote'))}</p>
<p><a href="/transparency.json">${escapeHtml(m.t('transparency.json'))}</a></p>
${panels.join('\n')}`,
  )
}
