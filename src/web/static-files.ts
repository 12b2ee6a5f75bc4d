// The web app's built files, read into memory once at start with their headers worked
// out in advance: a request for /app/... costs a Map look-up. index.html is the answer for every
// client route; a file name that is not among the built files is 404. The app fetches one of its
// catalogues (assets/messages-{tag}.{hash}.json), the one of the language it speaks.
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { extname, join, relative, sep } from 'node:path'
import { gzipSync } from 'node:zlib'
import { routeNotFound } from '../http/errors.js'
import type { HeaderMap, Reply } from '../http/reply.js'

// The app's own files only: no inline script or style, nothing from elsewhere, no framing. QR
// codes arrive through fetch (they need the bearer token) and are shown from blob: URLs.
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; " +
  "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
}

// scripts/build-app.mjs names every file but index.html after its content: a new build is a new name.
const IMMUTABLE = 'public, max-age=31536000, immutable'
const INDEX = 'index.html'
const CATALOGUE = /^assets\/messages-[\w-]+\.[\w-]+\.json$/

interface File {
  body: Buffer
  /** the gzip form, when it is smaller */
  gzip: Buffer | undefined
  etag: string
  headers: HeaderMap
}

export class AppFiles {
  readonly #files = new Map<string, File>()

  /** Every file under `dir` (the build's dist/app); throws when index.html is not there. */
  constructor(dir: string) {
    if (!existsSync(join(dir, INDEX))) throw new Error(`${join(dir, INDEX)} is missing: run "npm run build", or set SERVE_APP=off`)
    for (const path of walk(dir)) {
      const name = relative(dir, path).split(sep).join('/')
      const body = readFileSync(path)
      const gzip = gzipSync(body, { level: 9 })
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`
      this.#files.set(name, {
        body,
        gzip: gzip.length < body.length ? gzip : undefined,
        etag,
        headers: {
          'content-type': TYPES[extname(name)] ?? 'application/octet-stream',
          'cache-control': name === INDEX ? 'no-cache' : IMMUTABLE,
          'content-security-policy': CONTENT_SECURITY_POLICY,
          'referrer-policy': 'no-referrer',
          'x-frame-options': 'DENY',
          'cross-origin-opener-policy': 'same-origin',
          etag,
          vary: 'Accept-Encoding',
        },
      })
    }
  }

  /**
   * Bytes over the wire for the whole app in its largest language, gzipped where that is smaller
   * (the size budget): every file but the catalogues, and the largest catalogue, since a browser
   * fetches only its own.
   */
  get gzipBytes(): number {
    let total = 0
    let catalogue = 0
    for (const [name, f] of this.#files) {
      const bytes = (f.gzip ?? f.body).length
      if (CATALOGUE.test(name)) catalogue = Math.max(catalogue, bytes)
      else total += bytes
    }
    return total + catalogue
  }

  /**
   * The answer for `/app/{path}` ('' for /app/ itself): a built file, index.html for a client
   * route (no dot in its last segment), else 404.
   */
  reply(path: string, ifNoneMatch: string | undefined, acceptEncoding: string | undefined): Reply {
    const last = path.slice(path.lastIndexOf('/') + 1)
    const file = this.#files.get(path) ?? (last.includes('.') ? undefined : this.#files.get(INDEX)!)
    if (file === undefined) throw routeNotFound()
    if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => tag.trim() === file.etag)) {
      return { status: 304, headers: { etag: file.etag, 'cache-control': file.headers['cache-control']!, vary: 'Accept-Encoding' } }
    }
    if (file.gzip !== undefined && acceptsGzip(acceptEncoding)) {
      return { status: 200, headers: { ...file.headers, 'content-encoding': 'gzip' }, body: file.gzip }
    }
    return { status: 200, headers: file.headers, body: file.body }
  }
}

/** "gzip" listed without q=0 (RFC 9110 12.5.3). */
function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';')
    return coding!.trim() === 'gzip' && !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p))
  })
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* walk(path)
    else yield path
  }
}
