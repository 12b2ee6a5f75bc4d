// Content negotiation for the few answers that exist as a page for people and as JSON for
// programs: HTML only when Accept prefers it (RFC 9110 12.5.1); anything else, a missing Accept
// or "*/*" included, keeps the JSON of the contract.

/** The q of the most specific range in `accept` that matches `type` ("text/html"), 0 when none does. */
function qualityOf(accept: string, type: string): number {
  const [major] = type.split('/')
  let best = -1
  let q = 0
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.trim().toLowerCase().split(';')
    const r = range.trim()
    const specificity = r === type ? 2 : r === `${major}/*` ? 1 : r === '*/*' ? 0 : -1
    if (specificity <= best) continue
    best = specificity
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    const value = qp === undefined ? 1 : Number(qp.slice(2))
    q = Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0
  }
  return q
}

/** A browser's Accept ("text/html,...,*\/*;q=0.8") prefers HTML; curl's "*\/*" and an API client's do not. */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined || accept === '') return false
  const html = qualityOf(accept, 'text/html')
  return html > 0 && html > qualityOf(accept, 'application/json')
}
