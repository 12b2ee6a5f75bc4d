// Building DOM from data: every text goes in through textContent, never as HTML, so nothing a
// user typed can become markup or script (and the CSP's "no inline script" holds).

type Child = Node | string | null | undefined | false
type Attrs = Record<string, string | boolean | undefined | ((ev: Event) => void)>

/** h('button', { type: 'button', onclick: f }, 'Copy') */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') el.addEventListener(name.slice(2), value)
    else if (value === true) el.setAttribute(name, '')
    else if (typeof value === 'string') el.setAttribute(name, value)
  }
  el.append(...children.filter((c): c is Node | string => c !== null && c !== undefined && c !== false))
  return el
}

const SVG = 'http://www.w3.org/2000/svg'

export function svg(tag: string, attrs: Record<string, string | number> = {}, ...children: Node[]): SVGElement {
  const el = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value))
  el.append(...children)
  return el as SVGElement
}

/** A visible status line for people using a screen reader and those who are not. */
export function announce(message: string): void {
  const status = document.getElementById('status')!
  status.textContent = message
  status.classList.add('shown')
  window.setTimeout(() => {
    if (status.textContent === message) status.classList.remove('shown')
  }, 4000)
}
