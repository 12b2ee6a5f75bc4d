// Reads a threat feed from a file or an http(s) URL, conditionally: a URL with the ETag and
// Last-Modified its server sent last time (304: unchanged), a file by its size and modification
// time. The one place with the limits of reading one: time, size, redirects. The body is handed
// on as it arrives (parse.ts reads it a chunk at a time), never held whole.
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'

/** Past this a feed is refused: a million hosts in a hosts file take about 30 MB. */
export const MAX_FEED_BYTES = 256 * 1024 * 1024
/** The whole read, redirects included. */
export const FEED_TIMEOUT_MS = 120_000

export interface Validators {
  etag: string | null
  lastModified: string | null
}

/** `body`: the feed's bytes, to be read once; a read past MAX_FEED_BYTES or cut off throws a FeedError. */
export type SourceRead = { changed: false } | { changed: true; body: AsyncIterable<Uint8Array>; validators: Validators }

export class FeedError extends Error {}

export const isUrl = (location: string): boolean => /^https?:\/\//i.test(location)

/** `known`: what the last good read said, or undefined to read it whatever it is. `stop` ends a read early (shutdown). */
export async function readSource(location: string, known: Validators | undefined, stop?: AbortSignal, timeoutMs = FEED_TIMEOUT_MS): Promise<SourceRead> {
  return isUrl(location) ? readUrl(location, known, timeoutMs, stop) : readPath(location, known)
}

async function readPath(path: string, known: Validators | undefined): Promise<SourceRead> {
  let info
  try {
    info = await stat(path)
  } catch (err) {
    throw new FeedError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  if (!info.isFile()) throw new FeedError(`${path} is not a file`)
  if (info.size > MAX_FEED_BYTES) throw new FeedError(`${path} is larger than ${MAX_FEED_BYTES} bytes`)
  // A file has no ETag: its size and modification time play the part.
  const etag = `file:${info.size}:${info.mtimeMs}`
  if (known?.etag === etag) return { changed: false }
  return { changed: true, body: capped(createReadStream(path), path, (err) => `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`), validators: { etag, lastModified: null } }
}

async function readUrl(url: string, known: Validators | undefined, timeoutMs: number, stop: AbortSignal | undefined): Promise<SourceRead> {
  const headers: Record<string, string> = { accept: 'text/plain, text/csv, */*;q=0.5', 'user-agent': 'link-service blocklist' }
  if (known?.etag != null) headers['if-none-match'] = known.etag
  if (known?.lastModified != null) headers['if-modified-since'] = known.lastModified
  let res: Response
  const signal = stop === undefined ? AbortSignal.timeout(timeoutMs) : AbortSignal.any([AbortSignal.timeout(timeoutMs), stop])
  try {
    res = await fetch(url, { headers, redirect: 'follow', signal })
  } catch (err) {
    throw new FeedError(`cannot fetch ${url}: ${causeOf(err)}`)
  }
  if (res.status === 304) {
    await res.body?.cancel()
    return { changed: false }
  }
  if (res.status !== 200) {
    await res.body?.cancel()
    throw new FeedError(`${url} answered ${res.status}`)
  }
  const declared = Number(res.headers.get('content-length') ?? '0')
  if (declared > MAX_FEED_BYTES) {
    await res.body?.cancel()
    throw new FeedError(`${url} is larger than ${MAX_FEED_BYTES} bytes`)
  }
  const body = capped(res.body as unknown as AsyncIterable<Uint8Array>, url, (err) => `cannot fetch ${url}: ${causeOf(err)}`)
  return { changed: true, body, validators: { etag: res.headers.get('etag'), lastModified: res.headers.get('last-modified') } }
}

/** The chunks of `body`, at most MAX_FEED_BYTES of them; any failure of the read a FeedError. */
async function* capped(body: AsyncIterable<Uint8Array>, name: string, failure: (err: unknown) => string): AsyncGenerator<Uint8Array> {
  let total = 0
  try {
    for await (const chunk of body) {
      total += chunk.byteLength
      if (total > MAX_FEED_BYTES) throw new FeedError(`${name} is larger than ${MAX_FEED_BYTES} bytes`)
      yield chunk
    }
  } catch (err) {
    if (err instanceof FeedError) throw err
    throw new FeedError(failure(err))
  }
}

/** fetch's own message is "fetch failed"; the cause says what failed. */
function causeOf(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } }
  if (e.name === 'TimeoutError') return 'timed out'
  if (e.name === 'AbortError') return 'stopped'
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err)
}
