// Pages for people who open a short link in a browser: what happened to a link that does not
// redirect (unknown, expired, disabled, suspended, or its destination blocked), and a link's
// preview. Rendered on the server with no script, in the web app's colours, every value through
// escapeHtml; the one inline stylesheet is allowed by its hash, so the CSP forbids everything
// else: no script, no other style, no image, no request to anyone. Every word comes from the
// visitor's catalogue (catalogues.ts), English unless given another.
import { createHash } from 'node:crypto'
import { domainToUnicode } from 'node:url'
import { ENGLISH, type Messages } from './catalogues.js'

export type StoppedKind = 'unknown' | 'expired' | 'exhausted' | 'disabled' | 'suspended' | 'blocked' | 'flagged'

const STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--surface:#fff;--text:#14171f;--muted:#555e6e;--border:#d5d9e0;--accent:#1d4ed8;--accent-text:#fff;--warn:#b42318;--warn-soft:#fdecea}
@media (prefers-color-scheme:dark){:root{--bg:#0f1117;--surface:#181b24;--text:#e8eaf0;--muted:#a3abba;--border:#2e3442;--accent:#8ab4ff;--accent-text:#0b1020;--warn:#ff8a80;--warn-soft:#3a1d1d}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
header{padding:12px max(16px,calc((100% - 640px)/2 + 16px));background:var(--surface);border-bottom:1px solid var(--border);font-weight:700}
header span::before{content:"";display:inline-block;width:10px;height:10px;border-radius:3px;background:var(--accent);margin-inline-end:8px}
main{max-width:640px;margin:0 auto;padding:24px 16px 64px}
h1{font-size:1.6rem;line-height:1.25;margin:8px 0 16px;overflow-wrap:anywhere}
.panel{background:var(--surface);border:1px solid var(--border);border-radius:10px;padding:16px;margin-bottom:16px}
.panel.warn{border-color:var(--warn);background:var(--warn-soft)}
.status{display:inline-block;font-size:.8rem;font-weight:600;letter-spacing:.04em;text-transform:uppercase;color:var(--muted)}
.url{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;overflow-wrap:anywhere}
.muted{color:var(--muted)}
a{color:var(--accent);text-underline-offset:2px}
a:focus-visible{outline:3px solid var(--accent);outline-offset:2px;border-radius:4px}
.button{display:inline-flex;align-items:center;min-height:44px;padding:8px 16px;border-radius:8px;text-decoration:none;font-weight:500;border:1px solid var(--border);background:var(--surface);color:var(--text);margin-block:4px;margin-inline:0 8px}
.button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}
label{display:block;font-weight:600;margin:12px 0 4px}
input{display:block;width:100%;min-height:44px;padding:8px 12px;border:1px solid var(--border);border-radius:8px;background:var(--bg);color:var(--text);font:inherit;margin-bottom:12px}
input:focus-visible,.button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
button.button{font:inherit;cursor:pointer}
.error{color:var(--warn);font-weight:600}
h2{font-size:1.1rem;margin:0 0 8px}.figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(130px,1fr));gap:4px 16px}.figures dd{font-size:1.1rem;font-variant-numeric:tabular-nums}
dl{margin:0}dt{font-size:.8rem;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}dd{margin:0 0 10px}
`.trim()

const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`

/** No script, no source of anything but the page's own stylesheet; no form, no framing, no base. */
export const PAGE_CSP = `default-src 'none'; style-src ${STYLE_HASH}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`
/**
 * The password page's: the same, but its one form may post. Browsers hold form-action to every
 * redirect that follows the post too, and the right password's 302 leads to the link's destination,
 * anywhere: so any http(s) target. The page has no script and shows only escaped text, so no one
 * else can make it post.
 */
const PASSWORD_PAGE_CSP = PAGE_CSP.replace("form-action 'none'", 'form-action http: https:')

/** The headers of every visitor page: its type and policy; never cached (a link's state changes). */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': PAGE_CSP,
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  vary: 'Accept, Accept-Language',
} as const

/** The headers of the password page (passwordPage). */
export const PASSWORD_PAGE_HEADERS = { ...PAGE_HEADERS, 'content-security-policy': PASSWORD_PAGE_CSP } as const

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Every value a page shows goes through here. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

/** The headers that say which language a page is in (with PAGE_HEADERS, whose Vary names Accept-Language). */
export const languageHeaders = (m: Messages) => ({ 'content-language': m.lang })

/** The shell every visitor page shares: <html lang dir> from the catalogue, the stylesheet, the header. */
export function page(m: Messages, title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="${m.lang}" dir="${m.dir}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><meta name="referrer" content="no-referrer"><title>${m.t('site.suffix', { title: escapeHtml(title) }, escapeHtml)}</title>
${head}<style>${STYLE}</style></head>
<body><header><span>Link Service</span></header><main>
${body}
</main></body></html>
`
}

// Each kind's words are the catalogue's "{kind}.title" and "{kind}.text".
const WHAT: Record<StoppedKind, { status: 404 | 410; warn: boolean }> = {
  unknown: { status: 404, warn: false },
  expired: { status: 410, warn: false },
  exhausted: { status: 410, warn: false },
  disabled: { status: 410, warn: true },
  suspended: { status: 410, warn: true },
  blocked: { status: 410, warn: true },
  flagged: { status: 410, warn: true },
}

/** A message with a link in it: its text escaped, the link's words the catalogue's too. */
const withLink = (m: Messages, key: string, href: string, linkKey: string) =>
  m.t(key, { link: `<a href="${escapeHtml(href)}">${escapeHtml(m.t(linkKey))}</a>` }, escapeHtml)

/** The page for a code that does not redirect, with the status it goes with (the same as the JSON's). */
export function stoppedPage(kind: StoppedKind, code: string | undefined, reportUrl: string, m: Messages = ENGLISH): { status: number; html: string } {
  const what = WHAT[kind]
  const title = m.t(`${kind}.title`)
  const report = code === undefined || kind === 'unknown' ? '' : `<p>${withLink(m, 'stopped.report', reportUrl, 'stopped.reportLink')}</p>`
  const reportOther = kind === 'unknown' ? `<p>${withLink(m, 'unknown.reportOther', reportUrl, 'unknown.reportOtherLink')}</p>` : ''
  const body = `<div class="panel${what.warn ? ' warn' : ''}"><p class="status">${escapeHtml(m.t(what.status === 404 ? 'status.notFound' : 'status.stopped'))}</p>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(m.t(`${kind}.text`))}</p>
${code === undefined ? '' : codeLine(m, code)}</div>
${report}${reportOther}`
  return { status: what.status, html: page(m, title, body) }
}

const codeLine = (m: Messages, code: string) => `<p class="muted">${m.t('code', { code: `<span class="url">${escapeHtml(code)}</span>` }, escapeHtml)}</p>`

/** What the password page says: ask, the last one was wrong, or wait this many seconds. */
export type PasswordState = { kind: 'ask' } | { kind: 'wrong' } | { kind: 'wait'; seconds: number }

/**
 * The form a browser gets for a link with a password (401): it posts the password to `action`
 * (relative: /r/{code}/unlock), which answers the 302, or this page again. No script; nothing
 * about the destination.
 */
export function passwordPage(code: string, action: string, state: PasswordState, m: Messages = ENGLISH): string {
  const said = state.kind === 'wrong' ? m.t('password.wrong') : state.kind === 'wait' ? m.t('password.wait', { count: state.seconds }) : undefined
  const error = said === undefined ? '' : `<p class="error" id="password-error" role="alert">${escapeHtml(said)}</p>\n`
  const body = `<div class="panel"><p class="status">${escapeHtml(m.t('password.status'))}</p>
<h1>${escapeHtml(m.t('password.title'))}</h1>
<p>${escapeHtml(m.t('password.text'))}</p>
${error}<form method="post" action="${escapeHtml(action)}">
<label for="password">${escapeHtml(m.t('password.label'))}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus${error === '' ? '' : ' aria-invalid="true" aria-describedby="password-error"'}>
<button class="button primary" type="submit">${escapeHtml(m.t('open'))}</button>
</form>
${codeLine(m, code)}</div>`
  return page(m, m.t('password.status'), body)
}

/**
 * The card a link-preview fetcher gets: Open Graph and Twitter card tags from what the owner
 * wrote (every value escaped), noindex, and a plain link on to the destination.
 */
export function cardPage(shortUrl: string, location: string, card: { title: string | null; description: string | null; imageUrl: string | null }, m: Messages = ENGLISH): string {
  const meta = (attr: 'property' | 'name', key: string, value: string | null) =>
    value === null ? '' : `<meta ${attr}="${key}" content="${escapeHtml(value)}">\n`
  const title = card.title ?? shortUrl
  const head =
    '<meta name="robots" content="noindex">\n' +
    meta('property', 'og:type', 'website') +
    meta('property', 'og:url', shortUrl) +
    meta('property', 'og:title', title) +
    meta('property', 'og:description', card.description) +
    meta('property', 'og:image', card.imageUrl) +
    meta('name', 'twitter:card', card.imageUrl === null ? 'summary' : 'summary_large_image') +
    meta('name', 'twitter:title', title) +
    meta('name', 'twitter:description', card.description) +
    meta('name', 'twitter:image', card.imageUrl)
  const body = `<div class="panel"><h1>${escapeHtml(title)}</h1>
${card.description === null ? '' : `<p>${escapeHtml(card.description)}</p>\n`}<a class="button primary" href="${escapeHtml(location)}" rel="noreferrer nofollow">${escapeHtml(m.t('open'))}</a></div>`
  return page(m, title, body, head)
}

/** A working link's destination, shown without redirecting; the visitor decides. */
export function previewPage(code: string, shortUrl: string, url: string, reportUrl: string, m: Messages = ENGLISH): string {
  const host = new URL(url).hostname
  const unicode = domainToUnicode(host) || host
  // Hosts and URLs read left to right in a right-to-left page too (bdi keeps them whole).
  const hostLine = unicode === host ? escapeHtml(host) : `${escapeHtml(unicode)} <span class="muted">${m.t('preview.punycode', { host: `<span class="url">${escapeHtml(host)}</span>` }, escapeHtml)}</span>`
  const body = `<div class="panel"><p class="status">${escapeHtml(m.t('preview.status'))}</p>
<h1>${escapeHtml(m.t('preview.title'))}</h1>
<dl><dt>${escapeHtml(m.t('preview.shortLink'))}</dt><dd class="url"><bdi>${escapeHtml(shortUrl)}</bdi></dd>
<dt>${escapeHtml(m.t('preview.destination'))}</dt><dd class="url"><bdi>${escapeHtml(url)}</bdi></dd>
<dt>${escapeHtml(m.t('preview.host'))}</dt><dd><bdi>${hostLine}</bdi></dd></dl>
<p>${escapeHtml(m.t('preview.check'))}</p>
<a class="button primary" href="${escapeHtml(url)}" rel="noreferrer nofollow"><span>${m.t('preview.go', { host: `<bdi>${escapeHtml(unicode)}</bdi>` }, escapeHtml)}</span></a></div>
<p>${withLink(m, 'preview.wrong', reportUrl, 'preview.wrongLink')}</p>`
  return page(m, m.t('preview.pageTitle', { code }), body)
}
