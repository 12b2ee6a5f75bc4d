// A destination's host as people read it (Unicode) and as the network does (punycode, RFC 3492).
// Two hosts that look alike ("раураl.example" in Cyrillic) differ in their punycode: the app shows
// it next to the Unicode form whenever the two differ.
import { h } from './dom.js'
import { tNodes } from './i18n.js'

const BASE = 36
const T_MIN = 1
const T_MAX = 26
const SKEW = 38
const DAMP = 700

function adapt(delta: number, points: number, first: boolean): number {
  let d = first ? Math.floor(delta / DAMP) : delta >> 1
  d += Math.floor(d / points)
  let k = 0
  while (d > ((BASE - T_MIN) * T_MAX) >> 1) {
    d = Math.floor(d / (BASE - T_MIN))
    k += BASE
  }
  return k + Math.floor(((BASE - T_MIN + 1) * d) / (d + SKEW))
}

const digit = (c: number): number => (c - 48 < 10 ? c - 22 : c - 65 < 26 ? c - 65 : c - 97 < 26 ? c - 97 : BASE)

/** One punycode label (without "xn--") decoded, or undefined when it is not valid punycode. */
function decodeLabel(input: string): string | undefined {
  const out: number[] = []
  const last = input.lastIndexOf('-')
  for (let j = 0; j < Math.max(0, last); j++) out.push(input.charCodeAt(j))
  let n = 128
  let i = 0
  let bias = 72
  for (let pos = last > 0 ? last + 1 : 0; pos < input.length; ) {
    const old = i
    for (let w = 1, k = BASE; ; k += BASE) {
      if (pos >= input.length) return undefined
      const d = digit(input.charCodeAt(pos++))
      if (d >= BASE) return undefined
      i += d * w
      const t = k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias
      if (d < t) break
      w *= BASE - t
    }
    bias = adapt(i - old, out.length + 1, old === 0)
    n += Math.floor(i / (out.length + 1))
    i %= out.length + 1
    if (n > 0x10ffff) return undefined
    out.splice(i++, 0, n)
  }
  return String.fromCodePoint(...out)
}

/** The host of `url` in both forms; undefined when the url has no host. */
function hostForms(url: string): { unicode: string; ascii: string } | undefined {
  let ascii: string
  try {
    ascii = new URL(url).hostname
  } catch {
    return undefined
  }
  if (ascii === '') return undefined
  const unicode = ascii
    .split('.')
    .map((label) => (label.startsWith('xn--') ? (decodeLabel(label.slice(4)) ?? label) : label))
    .join('.')
  return { unicode, ascii }
}

/** "Host bücher.example, punycode xn--bcher-kva.example" when the two forms differ; null otherwise. */
export function hostLine(url: string): HTMLElement | null {
  const forms = hostForms(url)
  if (forms === undefined || forms.unicode === forms.ascii) return null
  return h('p', { class: 'host' }, ...tNodes('host.line', { unicode: h('bdi', { class: 'unicode' }, forms.unicode), ascii: h('code', { class: 'punycode', dir: 'ltr' }, forms.ascii) }))
}
