// Pages for people who open a short link in a browser: what happened to a link that does not
// redirect (unknown, expired, disabled, suspended, or its destination blocked), and a link's
// preview. Rendered on the server with no script, in the web app's colours, every value through
// escapeHtml; the one inline stylesheet is allowed by its hash, so the CSP forbids everything
// else: no script, no other style, no image, no request to anyone.
import { createHash } from 'node:crypto'
import { domainToUnicode } from 'node:url'

export type StoppedKind = 'unknown' | 'expired' | 'exhausted' | 'disabled' | 'suspended' | 'blocked' | 'flagged'

const STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--surface:#fff;--text:#14171f;--muted:#555e6e;--border:#d5d9e0;--accent:#1d4ed8;--accent-text:#fff;--warn:#b42318;--warn-soft:#fdecea}
@media (prefers-color-scheme:dark){:root{--bg:#0f1117;--surface:#181b24;--text:#e8eaf0;--muted:#a3abba;--border:#2e3442;--accent:#8ab4ff;--accent-text:#0b1020;--warn:#ff8a80;--warn-soft:#3a1d1d}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
header{padding:12px max(16px,calc((100% - 640px)/2 + 16px));background:var(--surface);border-bottom:1px solid var(--border);font-weight:700}
header span::before{content:"";display:inline-block;width:10px;height:10px;border-radius:3px;background:var(--accent);margin-right:8px}
main{max-width:640px;margin:0 auto;padding:24px 16px 64px}
h1{font-size:1.6rem;line-height:1.25;margin:8px 0 16px;overflow-wrap:anywhere}
.panel{background:var(--surface);border:1px solid var(--border);border-radius:10px;padding:16px;margin-bottom:16px}
.panel.warn{border-color:var(--warn);background:var(--warn-soft)}
.status{display:inline-block;font-size:.8rem;font-weight:600;letter-spacing:.04em;text-transform:uppercase;color:var(--muted)}
.url{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;overflow-wrap:anywhere}
.muted{color:var(--muted)}
a{color:var(--accent);text-underline-offset:2px}
a:focus-visible{outline:3px solid var(--accent);outline-offset:2px;border-radius:4px}
.button{display:inline-flex;align-items:center;min-height:44px;padding:8px 16px;border-radius:8px;text-decoration:none;font-weight:500;border:1px solid var(--border);background:var(--surface);color:var(--text);margin:4px 8px 4px 0}
.button.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-text)}
label{display:block;font-weight:600;margin:12px 0 4px}
input{display:block;width:100%;min-height:44px;padding:8px 12px;border:1px solid var(--border);border-radius:8px;background:var(--bg);color:var(--text);font:inherit;margin-bottom:12px}
input:focus-visible,.button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
button.button{font:inherit;cursor:pointer}
.error{color:var(--warn);font-weight:600}
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
  vary: 'Accept',
} as const

/** The headers of the password page (passwordPage). */
export const PASSWORD_PAGE_HEADERS = { ...PAGE_HEADERS, 'content-security-policy': PASSWORD_PAGE_CSP } as const

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Every value a page shows goes through here. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

function page(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><meta name="referrer" content="no-referrer"><title>${escapeHtml(title)} · Link Service</title>
${head}<style>${STYLE}</style></head>
<body><header><span>Link Service</span></header><main>
${body}
</main></body></html>
`
}

const WHAT: Record<StoppedKind, { status: 404 | 410; title: string; text: string; warn: boolean }> = {
  unknown: { status: 404, title: 'This short link does not exist', text: 'There is no link with this code. It may have been mistyped, or deleted by its owner.', warn: false },
  expired: { status: 410, title: 'This short link has expired', text: 'Its owner gave it an end date, and that date has passed. It no longer leads anywhere.', warn: false },
  exhausted: { status: 410, title: 'This short link has been used up', text: 'Its owner allowed it a number of visits, and all of them have been made. It no longer leads anywhere.', warn: false },
  disabled: { status: 410, title: 'This short link has been disabled', text: 'The operator of this service has stopped it, usually because it was used for abuse. It no longer leads anywhere.', warn: true },
  suspended: { status: 410, title: 'This short link is suspended', text: 'Several people reported it as abuse. It is stopped until the operator of this service has looked at it.', warn: true },
  blocked: { status: 410, title: 'This short link leads to a dangerous site', text: 'Its destination is listed as phishing or malware on a block list this service follows, so it is not shown here and the link does not lead there. Do not look for it elsewhere.', warn: true },
  flagged: { status: 410, title: 'This short link leads to a dangerous site', text: 'A check of where it leads found that it now redirects to a site on a block list this service follows, so the link is stopped. Do not look for it elsewhere.', warn: true },
}

/** The page for a code that does not redirect, with the status it goes with (the same as the JSON's). */
export function stoppedPage(kind: StoppedKind, code: string | undefined, reportUrl: string): { status: number; html: string } {
  const what = WHAT[kind]
  const report = code === undefined || kind === 'unknown' ? '' : `<p>If you think this is wrong, or want to tell us more: <a href="${escapeHtml(reportUrl)}">report this link</a>.</p>`
  const reportOther = kind === 'unknown' ? `<p>Met a short link of this service that leads to phishing, malware or spam? <a href="${escapeHtml(reportUrl)}">Report a link</a>.</p>` : ''
  const body = `<div class="panel${what.warn ? ' warn' : ''}"><p class="status">${what.status === 404 ? 'Not found' : 'Stopped'}</p>
<h1>${escapeHtml(what.title)}</h1>
<p>${escapeHtml(what.text)}</p>
${code === undefined ? '' : `<p class="muted">Code: <span class="url">${escapeHtml(code)}</span></p>`}</div>
${report}${reportOther}`
  return { status: what.status, html: page(what.title, body) }
}

/** What the password page says: ask, the last one was wrong, or wait this many seconds. */
export type PasswordState = { kind: 'ask' } | { kind: 'wrong' } | { kind: 'wait'; seconds: number }

/**
 * The form a browser gets for a link with a password (401): it posts the password to `action`
 * (relative: /r/{code}/unlock), which answers the 302, or this page again. No script; nothing
 * about the destination.
 */
export function passwordPage(code: string, action: string, state: PasswordState): string {
  const error =
    state.kind === 'wrong'
      ? `<p class="error" id="password-error" role="alert">That password is not right. Check it and try again.</p>\n`
      : state.kind === 'wait'
      ? `<p class="error" id="password-error" role="alert">Too many tries. Wait ${state.seconds} ${state.seconds === 1 ? 'second' : 'seconds'}, then try again.</p>\n`
      : ''
  const body = `<div class="panel"><p class="status">Password required</p>
<h1>This short link is protected</h1>
<p>Its owner gave it a password. Enter it to go on.</p>
${error}<form method="post" action="${escapeHtml(action)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus${error === '' ? '' : ' aria-invalid="true" aria-describedby="password-error"'}>
<button class="button primary" type="submit">Open the link</button>
</form>
<p class="muted">Code: <span class="url">${escapeHtml(code)}</span></p></div>`
  return page('Password required', body)
}

/**
 * The card a link-preview fetcher gets: Open Graph and Twitter card tags from what the owner
 * wrote (every value escaped), noindex, and a plain link on to the destination.
 */
export function cardPage(shortUrl: string, location: string, card: { title: string | null; description: string | null; imageUrl: string | null }): string {
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
${card.description === null ? '' : `<p>${escapeHtml(card.description)}</p>\n`}<a class="button primary" href="${escapeHtml(location)}" rel="noreferrer nofollow">Open the link</a></div>`
  return page(title, body, head)
}

/** A working link's destination, shown without redirecting; the visitor decides. */
export function previewPage(code: string, shortUrl: string, url: string, reportUrl: string): string {
  const host = new URL(url).hostname
  const unicode = domainToUnicode(host) || host
  const hostLine = unicode === host ? escapeHtml(host) : `${escapeHtml(unicode)} <span class="muted">(punycode <span class="url">${escapeHtml(host)}</span>)</span>`
  const body = `<div class="panel"><p class="status">Preview</p>
<h1>Where this short link leads</h1>
<dl><dt>Short link</dt><dd class="url">${escapeHtml(shortUrl)}</dd>
<dt>Destination</dt><dd class="url">${escapeHtml(url)}</dd>
<dt>Host</dt><dd>${hostLine}</dd></dl>
<p>Check the host before you go on: a look-alike of a site you know is a common trick.</p>
<a class="button primary" href="${escapeHtml(url)}" rel="noreferrer nofollow">Go to ${escapeHtml(unicode)}</a></div>
<p>Looks wrong? <a href="${escapeHtml(reportUrl)}">Report this link</a>.</p>`
  return page(`Preview of ${code}`, body)
}
