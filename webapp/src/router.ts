// Client-side routes under /app/ with the History API; the service answers index.html for every
// such path, so a reload or a shared address lands on the same screen.

export const APP = '/app'
let render: (notice?: string) => void = () => {}

export function onNavigate(fn: (notice?: string) => void): void {
  render = fn
}

/** Goes to `path` (under /app), optionally with a notice shown on arrival. */
export function navigate(path: string, notice?: string, replace = false): void {
  if (replace) history.replaceState(null, '', path)
  else history.pushState(null, '', path)
  render(notice)
}

/** Same-app links navigate without a reload; modified clicks (new tab...) are the browser's. */
export function interceptLinks(): void {
  document.addEventListener('click', (ev) => {
    const a = (ev.target as Element).closest?.('a[data-nav]') as HTMLAnchorElement | null
    if (a === null || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return
    ev.preventDefault()
    navigate(a.pathname + a.search)
  })
  window.addEventListener('popstate', () => render())
}
