// Charts as inline SVG built with DOM calls (nothing inline for the CSP to refuse); colours come
// from the stylesheet, so they follow the light or dark scheme. Each has a text alternative.
import type { Breakdown, Day } from './api.js'
import { h, svg } from './dom.js'
import { counted, day, number } from './format.js'

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
    { class: 'sparkline', viewBox: `0 0 ${w} ${ht}`, width: w, height: ht, role: 'img', 'aria-label': `${counted(total, 'visit', 'visits')} in the last ${days.length} days` },
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
    title.textContent = `${day(d.date)}: ${d.humans} humans, ${d.bots} bots`
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
  maxLabel.textContent = `${number(max)} max`
  const total = days.reduce((s, d) => s + d.visits, 0)
  const chart = svg(
    'svg',
    { class: 'day-chart', viewBox: `0 0 ${w} ${ht}`, role: 'img', 'aria-label': `Visits per day, ${days[0] ? day(days[0].date) : ''} to ${days.at(-1) ? day(days.at(-1)!.date) : ''}: ${number(total)} in all. The table below has each day.` },
    svg('line', { class: 'axis', x1: 0, x2: w, y1: ht - bottom + 0.5, y2: ht - bottom + 0.5 }),
    ...bars,
    maxLabel,
    label(0, days[0] ? day(days[0].date) : '', 'start'),
    label(w, days.at(-1) ? day(days.at(-1)!.date) : '', 'end'),
  )
  const legend = h('p', { class: 'legend' }, h('span', { class: 'key humans' }), 'Humans ', h('span', { class: 'key bots' }), 'Bots')
  const table = h(
    'table',
    {},
    h('caption', {}, 'Visits per day'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Day'), h('th', { scope: 'col' }, 'Humans'), h('th', { scope: 'col' }, 'Bots'), h('th', { scope: 'col' }, 'Unique visitors'))),
    h('tbody', {}, ...[...days].reverse().map((d) => h('tr', {}, h('th', { scope: 'row' }, day(d.date)), h('td', {}, number(d.humans)), h('td', {}, number(d.bots)), h('td', {}, number(d.uniques))))),
  )
  return h('figure', { class: 'chart' }, chart, legend, h('details', {}, h('summary', {}, 'Show the days as a table'), table))
}

/** Bars shown in a breakdown chart; the table below it lists every value. */
const BREAKDOWN_BARS = 8

/**
 * One breakdown (devices, browsers, OS or countries) as horizontal bars, the most visits first: a
 * list whose items read as "Desktop: 3 visits, 60%", each bar's length set through the CSSOM (which
 * the CSP allows, unlike a style attribute), with every value in a table below. `label` turns a
 * value into words ("US" → "United States (US)").
 */
export function breakdownChart(title: string, rows: Breakdown, label: (name: string) => string): HTMLElement {
  const total = rows.reduce((s, r) => s + r.visits, 0)
  const share = (n: number) => `${Math.round((100 * n) / Math.max(1, total))}%`
  const heading = h('h3', { id: `breakdown-${title.toLowerCase().replace(/\W+/g, '-')}` }, title)
  if (rows.length === 0) return h('figure', { class: 'chart breakdown' }, heading, h('p', { class: 'muted' }, 'No visits by people in these 30 days.'))
  const shown = rows.slice(0, BREAKDOWN_BARS).map((r) => ({ name: label(r.name), visits: r.visits }))
  const rest = rows.slice(BREAKDOWN_BARS).reduce((s, r) => s + r.visits, 0)
  if (rest > 0) shown.push({ name: `${rows.length - BREAKDOWN_BARS} more`, visits: rest })
  const max = Math.max(1, ...shown.map((r) => r.visits))
  const bars = h(
    'ol',
    { class: 'bars', 'aria-labelledby': heading.id },
    ...shown.map((r) => {
      const bar = h('span', { class: 'bar', 'aria-hidden': 'true' })
      bar.style.width = `${((100 * r.visits) / max).toFixed(1)}%`
      return h('li', {}, h('span', { class: 'name' }, r.name), h('span', { class: 'track' }, bar), h('span', { class: 'num' }, `${counted(r.visits, 'visit', 'visits')}, ${share(r.visits)}`))
    }),
  )
  const table = h(
    'table',
    {},
    h('caption', {}, `${title}, visits by people`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, title.replace(/s$/, '')), h('th', { scope: 'col' }, 'Visits'), h('th', { scope: 'col' }, 'Share'))),
    h('tbody', {}, ...rows.map((r) => h('tr', {}, h('th', { scope: 'row' }, label(r.name)), h('td', {}, number(r.visits)), h('td', {}, share(r.visits))))),
  )
  return h('figure', { class: 'chart breakdown' }, heading, bars, h('details', {}, h('summary', {}, `Show ${title.toLowerCase()} as a table`), table))
}
