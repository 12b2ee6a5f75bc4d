// A link's split test: its variants in the link form (weights shown as shares), and on the link's
// page each variant's results, the verdict in plain words, and the snippet for the destination page.
import type { Link, Stats } from './api.js'
import { h } from './dom.js'
import { number } from './format.js'
import { copyButton } from './widgets.js'

const MAX_VARIANTS = 10

/** One variant's row: its URL, its weight and the share that weight gives it. */
function variantRow(url = '', weight = '50'): HTMLElement {
  return h(
    'div',
    { class: 'variant' },
    h('input', { type: 'url', name: 'variant_url', 'aria-label': 'Variant page', placeholder: 'https://example.com/b', value: url }),
    h('input', { type: 'number', name: 'variant_weight', 'aria-label': 'Variant weight', min: '1', max: '100', value: weight }),
    h('output', { class: 'share' }),
  )
}

/** Each row's share of the visitors, from the weights as typed. */
function showShares(box: HTMLElement): void {
  const rows = [...box.querySelectorAll<HTMLElement>('.variant')]
  const weightOf = (row: HTMLElement) => Math.max(0, Number(row.querySelector<HTMLInputElement>('[name=variant_weight]')!.value) || 0)
  const total = rows.reduce((sum, row) => sum + weightOf(row), 0)
  for (const row of rows) row.querySelector('output')!.textContent = total === 0 ? '' : `${Math.round((weightOf(row) / total) * 100)}% of visitors`
}

/** The form's split-test part; on edit it shows the link's variants and settings. */
export function experimentFields(link?: Link): HTMLDetailsElement {
  const given = link?.variants ?? []
  const rows = h('div', { class: 'variants' }, ...(given.length > 0 ? given.map((v) => variantRow(v.url, String(v.weight))) : [variantRow(), variantRow()]))
  rows.addEventListener('input', () => showShares(rows))
  showShares(rows)
  const add = h('button', {
    type: 'button',
    onclick: () => {
      if (rows.children.length < MAX_VARIANTS) rows.append(variantRow())
      showShares(rows)
    },
  }, 'Add a variant')
  const check = (name: string, label: string, on: boolean) => h('label', { class: 'choice' }, h('input', { type: 'checkbox', name, checked: on }), label)
  return h(
    'details',
    { class: 'more', open: given.length > 0 || link?.conversions === true },
    h('summary', {}, 'Split test: send visitors to several pages and see which converts'),
    h('p', { class: 'hint' }, 'Two to ten pages, each with a weight from 1 to 100. Each visitor sees one page for the whole day; nothing is stored about them. Leave the URLs empty for no test.'),
    rows,
    add,
    check('conversions', 'Count conversions (adds ls_cid to the page address; put the snippet on your page)', link?.conversions === true),
    check('promote_winner', 'When a page is the clear winner, send everyone there', link?.promote_winner === true),
  )
}

/** The split test as the API takes it: rows without a URL are left out; on create, nothing when nothing is set. */
export function experimentBody(data: FormData, link?: Link): Record<string, unknown> {
  const urls = data.getAll('variant_url').map(String)
  const weights = data.getAll('variant_weight').map(String)
  const variants = urls.flatMap((url, i) => (url.trim() === '' ? [] : [{ url: url.trim(), weight: Number(weights[i]) }]))
  const body = { variants, conversions: data.has('conversions'), promote_winner: data.has('promote_winner') }
  return link === undefined && variants.length === 0 && !body.conversions && !body.promote_winner ? {} : body
}

const percent = (n: number, of: number) => (of === 0 ? '–' : `${((n / of) * 100).toFixed(1)}%`)

const pValue = (p: number | null) => (p === null ? '' : p < 0.001 ? 'p < 0.001' : `p = ${p.toFixed(3)}`)

/** The verdict in words a marketer reads at a glance. */
function verdict(stats: Stats): string {
  const e = stats.experiment
  if (stats.variants.length < 2) return 'Conversions are counted for the one destination; add variants to compare pages.'
  if (e.confident && e.winner !== null) return `Variant ${e.winner + 1} converts best, and we are at least 95% sure the difference is real (${pValue(e.p_value)}).`
  const least = Math.min(...stats.variants.map((v) => v.visits))
  if (least < 100) return 'No winner yet: each variant needs at least 100 visits before we call one.'
  return 'No winner yet: the difference so far could be chance. Checking every day is fine; we only call a winner when it is clear.'
}

/** The results per variant, the verdict, and the snippet for the destination page; nothing without a test. */
export function experimentPanel(link: Link, stats: Stats, baseUrl: string): Node {
  if (stats.variants.length === 0) return document.createDocumentFragment()
  const snippet = `<script>(function(){var c=new URLSearchParams(location.search).get('ls_cid');if(c)navigator.sendBeacon('${baseUrl}/c/'+c)})()</script>`
  const head = h('tr', {}, ...['Variant', 'Share', 'Visits', 'Unique visitors', 'Conversions', 'Rate'].map((t) => h('th', { scope: 'col' }, t)))
  const total = stats.variants.reduce((sum, v) => sum + v.weight, 0)
  const row = (v: Stats['variants'][number], i: number) =>
    h(
      'tr',
      { class: stats.experiment.winner === i ? 'winner' : '' },
      h('th', { scope: 'row' }, `${i + 1}. `, h('a', { href: v.url, rel: 'noreferrer' }, v.url)),
      h('td', { class: 'num' }, percent(v.weight, total)),
      h('td', { class: 'num' }, number(v.visits)),
      h('td', { class: 'num' }, number(v.uniques)),
      h('td', { class: 'num' }, number(v.conversions)),
      h('td', { class: 'num' }, percent(v.conversions, v.visits)),
    )
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'experiment' },
    h('h2', { id: 'experiment' }, 'Split test, last 30 days'),
    h('p', { class: stats.experiment.confident ? 'ok' : '' }, verdict(stats)),
    h('table', { class: 'variants' }, h('thead', {}, head), h('tbody', {}, ...stats.variants.map(row))),
    link.conversions
      ? h('div', {}, h('p', { class: 'hint' }, 'Put this line on the page that counts as a conversion (a thank-you page, or run it when the visitor buys):'), h('pre', {}, h('code', {}, snippet)), copyButton(snippet, 'snippet'))
      : null,
  )
}
