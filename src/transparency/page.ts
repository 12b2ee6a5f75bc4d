// The transparency report as a page, in the visitor pages' shell and style. Every word it shows is
// in TEXT, so that it can move to a translation catalogue as it is.
import { ENGLISH } from '../web/catalogues.js'
import { escapeHtml, page } from '../web/visitor-pages.js'
import type { MonthFigures } from './queries.js'

export const TEXT = {
  title: 'Transparency report',
  intro: 'How this instance handles abuse, month by month (UTC): reports received and resolved, how long it took to act on a report, and what was stopped. Counts only: nothing here names a person, a link or a host.',
  received: 'Reports received',
  resolved: 'Reports resolved',
  median: 'Time to action (median)',
  p90: 'Time to action (90th percentile)',
  operator: 'Links stopped by an operator',
  feeds: 'Links stopped by threat feeds',
  health: 'Links stopped by health checks',
  accounts: 'Accounts disabled',
  none: '–',
  json: 'The same figures as JSON',
  actionNote: 'Time to action runs from a report to the operator resolving it with an action (a report dismissed is resolved, not acted on), by the month of the action.',
  units: { d: 'd', h: 'h', min: 'min', s: 's' },
} as const

/** 93784 → "1 d 2 h", 3700 → "1 h 1 min", 42 → "42 s". */
export function duration(seconds: number | null): string {
  if (seconds === null) return TEXT.none
  const u = TEXT.units
  const parts: Array<[number, string]> = [
    [Math.floor(seconds / 86_400), u.d],
    [Math.floor((seconds % 86_400) / 3_600), u.h],
    [Math.floor((seconds % 3_600) / 60), u.min],
    [Math.round(seconds % 60), u.s],
  ]
  const first = parts.findIndex(([n]) => n > 0)
  if (first === -1) return `0 ${u.s}`
  return parts
    .slice(first, first + 2)
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${n} ${unit}`)
    .join(' ')
}

export function transparencyPage(months: readonly MonthFigures[]): string {
  const panels = [...months].reverse().map((m) => {
    const figures: Array<[string, string | number]> = [
      [TEXT.received, m.reports_received],
      [TEXT.resolved, m.reports_resolved],
      [TEXT.median, duration(m.time_to_action_median_seconds)],
      [TEXT.p90, duration(m.time_to_action_p90_seconds)],
      [TEXT.operator, m.links_stopped_by_operator],
      [TEXT.feeds, m.links_stopped_by_threat_feeds],
      [TEXT.health, m.links_stopped_by_health_checks],
      [TEXT.accounts, m.accounts_disabled],
    ]
    const items = figures.map(([label, value]) => `<div><dt>${escapeHtml(label)}</dt><dd>${escapeHtml(String(value))}</dd></div>`).join('')
    return `<section class="panel" aria-label="${escapeHtml(m.month)}"><h2>${escapeHtml(m.month)}</h2><dl class="figures">${items}</dl></section>`
  })
  return page(
    ENGLISH,
    TEXT.title,
    `<h1>${escapeHtml(TEXT.title)}</h1>
<p class="muted">${escapeHtml(TEXT.intro)}</p>
<p class="muted">${escapeHtml(TEXT.actionNote)}</p>
<p><a href="/transparency.json">${escapeHtml(TEXT.json)}</a></p>
${panels.join('\n')}`,
  )
}
