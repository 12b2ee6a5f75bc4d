// A link's split test: its variants in the link form (weights shown as shares), and on the link's
// page each variant's results, the verdict in plain words, and the snippet for the destination page.
import type { Link, Stats } from './api.js'
import { h } from './dom.js'
import { number, percent, probability, rate } from './format.js'
import { t } from './i18n.js'
import { copyButton } from './widgets.js'

const MAX_VARIANTS = 10
/** Visits every variant needs before the service calls a winner (experiments/significance.ts). */
const MIN_VISITS = 100

/** One variant's row: its URL, its weight and the share that weight gives it. */
function variantRow(url = '', weight = '50'): HTMLElement {
  return h(
    'div',
    { class: 'variant' },
    h('input', { type: 'url', name: 'variant_url', 'aria-label': t('experiment.variantUrl'), placeholder: 'https://example.com/b', value: url }),
    h('input', { type: 'number', name: 'variant_weight', 'aria-label': t('experiment.variantWeight'), min: '1', max: '100', value: weight }),
    h('output', { class: 'share' }),
  )
}

/** Each row's share of the visitors, from the weights as typed. */
function showShares(box: HTMLElement): void {
  const rows = [...box.querySelectorAll<HTMLElement>('.variant')]
  const weightOf = (row: HTMLElement) => Math.max(0, Number(row.querySelector<HTMLInputElement>('[name=variant_weight]')!.value) || 0)
  const total = rows.reduce((sum, row) => sum + weightOf(row), 0)
  for (const row of rows) row.querySelector('output')!.textContent = total === 0 ? '' : t('experiment.share', { share: percent(weightOf(row) / total) })
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
  }, t('experiment.add'))
  const check = (name: string, label: string, on: boolean) => h('label', { class: 'choice' }, h('input', { type: 'checkbox', name, checked: on }), label)
  return h(
    'details',
    { class: 'more', open: given.length > 0 || link?.conversions === true },
    h('summary', {}, t('experiment.summary')),
    h('p', { class: 'hint' }, t('experiment.hint')),
    rows,
    add,
    check('conversions', t('experiment.conversions'), link?.conversions === true),
    check('promote_winner', t('experiment.promote'), link?.promote_winner === true),
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

const share = (n: number, of: number) => (of === 0 ? '–' : rate(n / of))

const pValue = (p: number | null) => (p === null ? '' : p < 0.001 ? t('experiment.pBelow', { p: probability(0.001) }) : t('experiment.pIs', { p: probability(p) }))

/** The verdict in words a marketer reads at a glance. */
function verdict(stats: Stats): string {
  const e = stats.experiment
  if (stats.variants.length < 2) return t('experiment.single')
  if (e.confident && e.winner !== null) return t('experiment.winner', { variant: e.winner + 1, confidence: percent(0.95), p: pValue(e.p_value) })
  const least = Math.min(...stats.variants.map((v) => v.visits))
  if (least < MIN_VISITS) return t('experiment.tooFew', { count: MIN_VISITS })
  return t('experiment.chance')
}

/** The results per variant, the verdict, and the snippet for the destination page; nothing without a test. */
export function experimentPanel(link: Link, stats: Stats, baseUrl: string): Node {
  if (stats.variants.length === 0) return document.createDocumentFragment()
  const snippet = `<script>(function(){var c=new URLSearchParams(location.search).get('ls_cid');if(c)navigator.sendBeacon('${baseUrl}/c/'+c)})()</script>`
  const head = h('tr', {}, ...[t('experiment.col.variant'), t('experiment.col.share'), t('experiment.col.visits'), t('experiment.col.uniques'), t('experiment.col.conversions'), t('experiment.col.rate')].map((label) => h('th', { scope: 'col' }, label)))
  const total = stats.variants.reduce((sum, v) => sum + v.weight, 0)
  const row = (v: Stats['variants'][number], i: number) =>
    h(
      'tr',
      { class: stats.experiment.winner === i ? 'winner' : '' },
      h('th', { scope: 'row' }, t('experiment.row', { n: i + 1 }), ' ', h('a', { href: v.url, rel: 'noreferrer' }, h('bdi', {}, v.url))),
      h('td', { class: 'num' }, share(v.weight, total)),
      h('td', { class: 'num' }, number(v.visits)),
      h('td', { class: 'num' }, number(v.uniques)),
      h('td', { class: 'num' }, number(v.conversions)),
      h('td', { class: 'num' }, share(v.conversions, v.visits)),
    )
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'experiment' },
    h('h2', { id: 'experiment' }, t('experiment.title')),
    h('p', { class: stats.experiment.confident ? 'ok' : '' }, verdict(stats)),
    h('div', { class: 'scroll' }, h('table', { class: 'variants' }, h('thead', {}, head), h('tbody', {}, ...stats.variants.map(row)))),
    link.conversions
      ? h('div', {}, h('p', { class: 'hint' }, t('experiment.snippetHint')), h('pre', { dir: 'ltr' }, h('code', {}, snippet)), copyButton(snippet, t('experiment.copySnippet')))
      : null,
  )
}
