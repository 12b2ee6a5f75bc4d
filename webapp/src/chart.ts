// Charts as inline SVG built with DOM calls (nothing inline for the CSP to refuse); colours come
// from the stylesheet, so they follow the light or dark scheme. Each has a text alternative.
// Time runs left to right in every language (the stylesheet keeps the SVGs ltr in an rtl page).
import type { Breakdown, Day } from './api.js'
import { h, svg } from './dom.js'
import { day, number, percent } from './format.js'
import { t } from './i18n.js'

/** Visits per day as a small line, for the links list. */
export function sparkline(days: Day[]): SVGElement {
  const w = 120
  const ht = 28
  const max = Math.max(1, ...days.map((d) => d.visits))
  const step = w / Math.max(1, days.length - 1)
  const points = days.map((d, i) => `${(i * step).toFixed(1)},${(ht - 2 - (d.visits / max) * (ht - 4)).toFixed(1)}`).join(' ')
  const total = days.reduce((s, d) => s + d.visits, 0)
  return svg(
    'svg',
    { class: 'sparkline', viewBox: `0 0 ${w} ${ht}`, width: w, height: ht, role: 'img', 'aria-label': t('chart.spark', { count: total, days: days.length }) },
    svg('polyline', { points, fill: 'none', 'stroke-width': 2, 'stroke-linejoin': 'round', 'stroke-linecap': 'round' }),
  )
}

/** Visits per day as stacked bars (humans, bots), with the same figures as a table below. */
export function dayChart(days: Day[]): HTMLElement {
  const w = 600
  const ht = 180
  const top = 12
  const bottom = 22
  const max = Math.max(1, ...days.map((d) => d.visits))
  const band = w / days.length
  const bar = Math.max(2, band - 3)
  const y = (n: number) => ((ht - top - bottom) * n) / max
  const bars = days.flatMap((d, i) => {
    const x = i * band + (band - bar) / 2
    const hb = y(d.bots)
    const hh = y(d.humans)
    const title = svg('title')
    title.textContent = t('chart.dayTitle', { day: day(d.date), humans: d.humans, bots: d.bots })
    return [
      svg('g', {}, title,
        svg('rect', { class: 'humans', x: x.toFixed(1), y: (ht - bottom - hh - hb).toFixed(1), width: bar.toFixed(1), height: hh.toFixed(1) }),
        svg('rect', { class: 'bots', x: x.toFixed(1), y: (ht - bottom - hb).toFixed(1), width: bar.toFixed(1), height: hb.toFixed(1) })),
    ]
  })
  const label = (x: number, text: string, anchor: string) => {
    const t = svg('text', { x, y: ht - 6, 'text-anchor': anchor })
    t.textContent = text
    return t
  }
  const maxLabel = svg('text', { x: 0, y: top - 2 })
  maxLabel.textContent = t('chart.max', { count: max })
  const total = days.reduce((s, d) => s + d.visits, 0)
  const chart = svg(
    'svg',
    { class: 'day-chart', viewBox: `0 0 ${w} ${ht}`, role: 'img', 'aria-label': t('chart.days', { from: days[0] ? day(days[0].date) : '', to: days.at(-1) ? day(days.at(-1)!.date) : '', total }) },
    svg('line', { class: 'axis', x1: 0, x2: w, y1: ht - bottom + 0.5, y2: ht - bottom + 0.5 }),
    ...bars,
    maxLabel,
    label(0, days[0] ? day(days[0].date) : '', 'start'),
    label(w, days.at(-1) ? day(days.at(-1)!.date) : '', 'end'),
  )
  const legend = h('p', { class: 'legend' }, h('span', { class: 'key humans' }), t('chart.humans'), ' ', h('span', { class: 'key bots' }), t('chart.bots'))
  const table = h(
    'table',
    {},
    h('caption', {}, t('chart.perDay')),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('chart.day')), h('th', { scope: 'col' }, t('chart.humans')), h('th', { scope: 'col' }, t('chart.bots')), h('th', { scope: 'col' }, t('chart.uniques')))),
    h('tbody', {}, ...[...days].reverse().map((d) => h('tr', {}, h('th', { scope: 'row' }, day(d.date)), h('td', {}, number(d.humans)), h('td', {}, number(d.bots)), h('td', {}, number(d.uniques))))),
  )
  return h('figure', { class: 'chart' }, chart, legend, h('details', {}, h('summary', {}, t('chart.showTable')), table))
}

/** Bars shown in a breakdown chart; the table below it lists every value. */
const BREAKDOWN_BARS = 8

/** Each breakdown's words: its title, its column's head, and its table's disclosure. */
const BREAKDOWNS = {
  devices: ['breakdown.devices', 'breakdown.device', 'breakdown.devices.show'],
  browsers: ['breakdown.browsers', 'breakdown.browser', 'breakdown.browsers.show'],
  os: ['breakdown.os', 'breakdown.os.one', 'breakdown.os.show'],
  countries: ['breakdown.countries', 'breakdown.country', 'breakdown.countries.show'],
} as const

/**
 * One breakdown (devices, browsers, OS or countries) as horizontal bars, the most visits first: a
 * list whose items read as "Desktop: 3 visits, 60%", each bar's length set through the CSSOM (which
 * the CSP allows, unlike a style attribute), with every value in a table below. `label` turns a
 * value into words ("US" → "United States (US)").
 */
export function breakdownChart(kind: keyof typeof BREAKDOWNS, rows: Breakdown, label: (name: string) => string): HTMLElement {
  const [titleKey, columnKey, showKey] = BREAKDOWNS[kind]
  const title = t(titleKey)
  const total = rows.reduce((s, r) => s + r.visits, 0)
  const share = (n: number) => percent(n / Math.max(1, total))
  const heading = h('h3', { id: `breakdown-${kind}` }, title)
  if (rows.length === 0) return h('figure', { class: 'chart breakdown' }, heading, h('p', { class: 'muted' }, t('breakdown.none')))
  const shown = rows.slice(0, BREAKDOWN_BARS).map((r) => ({ name: label(r.name), visits: r.visits }))
  const rest = rows.slice(BREAKDOWN_BARS).reduce((s, r) => s + r.visits, 0)
  if (rest > 0) shown.push({ name: t('breakdown.more', { count: rows.length - BREAKDOWN_BARS }), visits: rest })
  const max = Math.max(1, ...shown.map((r) => r.visits))
  const bars = h(
    'ol',
    { class: 'bars', 'aria-labelledby': heading.id },
    ...shown.map((r) => {
      const bar = h('span', { class: 'bar', 'aria-hidden': 'true' })
      bar.style.width = `${((100 * r.visits) / max).toFixed(1)}%`
      return h('li', {}, h('span', { class: 'name' }, r.name), h('span', { class: 'track' }, bar), h('span', { class: 'num' }, t('breakdown.bar', { count: r.visits, share: share(r.visits) })))
    }),
  )
  const table = h(
    'table',
    {},
    h('caption', {}, t('breakdown.caption', { title })),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t(columnKey)), h('th', { scope: 'col' }, t('fact.visits')), h('th', { scope: 'col' }, t('breakdown.share')))),
    h('tbody', {}, ...rows.map((r) => h('tr', {}, h('th', { scope: 'row' }, label(r.name)), h('td', {}, number(r.visits)), h('td', {}, share(r.visits))))),
  )
  return h('figure', { class: 'chart breakdown' }, heading, bars, h('details', {}, h('summary', {}, t(showKey)), table))
}
