// Threat-feed formats, detected line by line (blank lines and comments ignored): one host per
// line; hosts files ("0.0.0.0 host", "127.0.0.1 host", several hosts a line); Adblock-style
// "||host^"; URL lists and URLhaus-style CSV (the host of each URL). Every host comes out in the
// block list's form (links/hosts.ts). A line that is none of these is counted, never fatal.
//
// A feed comes from outside and may be hostile. Its text is read as it arrives (never held whole),
// every step of a line is linear in its length, a line longer than MAX_LINE_CHARS is invalid
// unread, and the parse yields to the event loop every few milliseconds: a feed never holds up a
// redirect. An entry that is a public suffix (com, co.uk, github.io) would block every host under
// it: it is refused, as is a feed of more than MAX_FEED_HOSTS hosts.
import { hostOf, normalizeHost } from '../links/hosts.js'

/**
 * The hosts of a feed, deduplicated, in 64 Sets by a hash of the name: one Set of a million is
 * rehashed whole each time it doubles (32 ms at a million, on the event loop), a shard in well
 * under a millisecond. Iterates shard by shard, not in the feed's order.
 */
export class HostSet implements Iterable<string> {
  private readonly shards: Array<Set<string>> = Array.from({ length: 64 }, () => new Set())
  private count = 0

  private shardOf(host: string): Set<string> {
    let h = host.length
    for (let i = 0; i < host.length && i < 16; i++) h = (h * 31 + host.charCodeAt(i)) | 0
    return this.shards[h & 63]!
  }

  add(host: string): void {
    const shard = this.shardOf(host)
    const before = shard.size
    shard.add(host)
    this.count += shard.size - before
  }

  has(host: string): boolean {
    return this.shardOf(host).has(host)
  }

  get size(): number {
    return this.count
  }

  *[Symbol.iterator](): Iterator<string> {
    for (const shard of this.shards) yield* shard
  }
}

export interface ParsedFeed {
  hosts: HostSet
  /** lines that were not comments, not blank, and gave no host (public suffixes included) */
  invalid: number
  /** lines that were not comments and not blank */
  lines: number
  /** of the invalid lines, those refused because an entry was a public suffix */
  suffixes: number
  /** the first few invalid lines, for the operator: 1-based line number and the text (shortened, control characters escaped) */
  samples: Array<{ line: number; text: string }>
}

/** Past this a line is invalid, unread: the longest URL a feed has any business listing. */
export const MAX_LINE_CHARS = 8192
/** Past this a feed is refused (a FeedTooLarge), not cut short: twice the biggest threat lists; a million hosts cost a service about 130 MB more at its peak (docs/deploy.md). */
export const MAX_FEED_HOSTS = 2_000_000
/** The parse runs this long at most before it lets the event loop run. */
const SLICE_MS = 4
/** A host, or the authority of a URL, longer than this is no host (DNS allows 253; IDN text may be longer before punycode). */
const MAX_HOST_CHARS = 1024

export class FeedTooLarge extends Error {}

const MAX_SAMPLES = 5
const MAX_SAMPLE_CHARS = 120
// The sink addresses of hosts files (RFC 6761 "localhost", and the usual all-zero addresses).
const SINKS = new Set(['0.0.0.0', '127.0.0.1', '::', '::1', '0', '::0'])
// Names every hosts file carries for the machine itself: not threats, not errors.
const SELF_NAMES = new Set(['localhost', 'localhost.localdomain', 'local', 'broadcasthost', 'ip6-localhost', 'ip6-loopback', 'ip6-localnet', 'ip6-mcastprefix', 'ip6-allnodes', 'ip6-allrouters', 'ip6-allhosts', '0.0.0.0'])
// Already in the block list's form: lowercase ASCII labels, the last one not all digits (so not
// an IPv4 address, which the URL parser would rewrite), none punycode (the parser validates it).
const PLAIN_HOST = /^(?!.*(?:^|\.)xn--)[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$/
const ALL_DIGITS = /(?:^|\.)\d+$/
const URL_START = /^https?:\/\//i

/** A host as it appears in a feed, in the block list's form, or undefined. */
function hostFrom(text: string): string | undefined {
  if (text.length > MAX_HOST_CHARS) return undefined
  let t = text.endsWith('.') ? text.slice(0, -1) : text
  if (t.startsWith('*.')) t = t.slice(2) // a wildcard names the domain: subdomains are blocked anyway
  if (t.length <= 253 && PLAIN_HOST.test(t) && !ALL_DIGITS.test(t)) return t
  return normalizeHost(t)
}

function hostOfUrl(text: string): string | undefined {
  // The authority (up to the first /, backslash, ? or #): a long one is no host, and is not given to the URL parser.
  const from = text.indexOf('//') + 2
  let end = from
  while (end < text.length && end - from <= MAX_HOST_CHARS && !'/\\?#'.includes(text[end]!)) end++
  if (end - from > MAX_HOST_CHARS) return undefined
  try {
    const host = hostOf(text)
    return host === '' ? undefined : host
  } catch {
    return undefined
  }
}

/** The fields of a CSV line (RFC 4180 quoting), enough for URLhaus' export. */
function csvFields(line: string): string[] {
  const fields: string[] = []
  let i = 0
  while (i <= line.length) {
    if (line[i] === '"') {
      let value = ''
      i++
      for (;;) {
        const q = line.indexOf('"', i)
        if (q === -1) return fields // an unterminated quote: what came before is all there is
        value += line.slice(i, q)
        if (line[q + 1] === '"') {
          value += '"'
          i = q + 2
        } else {
          i = q + 1
          break
        }
      }
      fields.push(value)
      i++ // the comma
    } else {
      const comma = line.indexOf(',', i)
      const end = comma === -1 ? line.length : comma
      fields.push(line.slice(i, end))
      i = end + 1
    }
  }
  return fields
}

const isSpace = (c: string | undefined): boolean => c !== undefined && c.trim() === ''

/** The line up to a comment: a # after white space (found by indexOf, linear whatever the line). */
function withoutComment(line: string): string {
  for (let i = line.indexOf('#'); i !== -1; i = line.indexOf('#', i + 1)) if (i > 0 && isSpace(line[i - 1])) return line.slice(0, i)
  return line
}

/** The hosts one line gives: [] for a line that is only noise (a hosts file's own names); undefined when invalid. */
export function hostsOfLine(raw: string): string[] | undefined {
  const line = raw.trim()
  // URLhaus CSV: the first field that is a URL (its later fields link to URLhaus itself).
  if (line.startsWith('"')) {
    const url = csvFields(line).find((f) => URL_START.test(f))
    const host = url === undefined ? undefined : hostOfUrl(url)
    return host === undefined ? undefined : [host]
  }
  if (URL_START.test(line)) {
    const host = hostOfUrl(line.split(/\s/, 1)[0]!)
    return host === undefined ? undefined : [host]
  }
  // Adblock: ||host^ with perhaps $options; exceptions (@@) and cosmetic rules are not hosts.
  if (line.startsWith('||')) {
    const m = /^\|\|([^/^$|]+)\^(?:\$.*)?$/.exec(line)
    const host = m === null ? undefined : hostFrom(m[1]!.toLowerCase())
    return host === undefined ? undefined : [host]
  }
  const words = withoutComment(line).trim().split(/\s+/)
  if (words.length > 1) {
    if (!SINKS.has(words[0]!)) return undefined
    const hosts: string[] = []
    for (const word of words.slice(1)) {
      const name = word.toLowerCase()
      if (SELF_NAMES.has(name)) continue
      const host = hostFrom(name)
      if (host === undefined) return undefined
      hosts.push(host)
    }
    return hosts
  }
  const host = hostFrom(words[0]!.toLowerCase())
  return host === undefined || SELF_NAMES.has(host) ? (host === undefined ? undefined : []) : [host]
}


/** Comments: # (hosts files, URLhaus), ! and [ (Adblock's comments and its "[Adblock Plus]" header). */
const COMMENT_START = new Set(['#', '!', '['])

/** The public suffix list (tldts), loaded when the first feed is parsed: a service without feeds does not carry it. */
let suffixTest: Promise<(host: string) => boolean> | undefined
function publicSuffixTest(): Promise<(host: string) => boolean> {
  return (suffixTest ??= import('tldts').then(({ getPublicSuffix }) => {
    // Both of its sections: an ICANN suffix (com, co.uk) and a private one (github.io) each hold
    // the hosts of many unrelated owners. An IP address has no suffix; a single label is one (the
    // list's "*" rule), as an unlisted top-level domain would be.
    const options = { allowPrivateDomains: true }
    return (host: string) => getPublicSuffix(host, options) === host
  }))
}

/**
 * Parses a feed as it arrives: `chunks` of UTF-8 bytes or text (a string is one chunk). The
 * work is cut into slices of a few milliseconds with the event loop let run between them, and a
 * line is never joined up past MAX_LINE_CHARS. Throws FeedTooLarge past MAX_FEED_HOSTS.
 */
export async function parseFeed(
  chunks: string | Iterable<Uint8Array | string> | AsyncIterable<Uint8Array | string>,
  { maxHosts = MAX_FEED_HOSTS }: { maxHosts?: number } = {},
): Promise<ParsedFeed> {
  const isPublicSuffix = await publicSuffixTest()
  const feed: ParsedFeed = { hosts: new HostSet(), invalid: 0, lines: 0, suffixes: 0, samples: [] }
  const decoder = new TextDecoder('utf-8')
  let lineNo = 0
  let partial = '' // the start of a line that goes on in the next chunk
  let overlong = false // the current line is past MAX_LINE_CHARS: skipped to its end
  let sliceStart = performance.now()

  const invalid = (text: string) => {
    feed.invalid++
    if (feed.samples.length < MAX_SAMPLES) feed.samples.push({ line: lineNo, text: text.trim().slice(0, MAX_SAMPLE_CHARS) })
  }
  const line = (raw: string) => {
    lineNo++
    if (overlong) {
      overlong = false
      feed.lines++
      invalid(raw)
      return
    }
    const start = raw.trimStart()
    if (start === '' || COMMENT_START.has(start[0]!)) return
    feed.lines++
    const hosts = hostsOfLine(start)
    if (hosts === undefined) return invalid(raw)
    if (hosts.some(isPublicSuffix)) {
      feed.suffixes++
      return invalid(raw)
    }
    for (const host of hosts) feed.hosts.add(host)
    if (feed.hosts.size > maxHosts) throw new FeedTooLarge(`more than ${maxHosts} hosts`)
  }
  /** A chunk's text: its whole lines parsed, the rest kept (or, past the limit, dropped). */
  const take = async (text: string) => {
    let from = 0
    let count = 0
    for (;;) {
      const nl = text.indexOf('\n', from)
      if (nl === -1) break
      if (overlong) line(partial)
      else if (partial.length + nl - from > MAX_LINE_CHARS) {
        overlong = true
        line(partial + text.slice(from, from + MAX_SAMPLE_CHARS))
      } else line(partial + text.slice(from, nl))
      partial = ''
      from = nl + 1
      if ((++count & 63) === 0 && performance.now() - sliceStart > SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve))
        sliceStart = performance.now()
      }
    }
    if (overlong) return
    const rest = text.length - from
    if (partial.length + rest > MAX_LINE_CHARS) {
      overlong = true
      partial = (partial + text.slice(from, from + MAX_SAMPLE_CHARS)).slice(0, MAX_SAMPLE_CHARS)
    } else partial += text.slice(from)
  }

  for await (const chunk of typeof chunks === 'string' ? [chunks] : chunks) {
    await take(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }))
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      sliceStart = performance.now()
    }
  }
  await take(decoder.decode())
  if (partial !== '' || overlong) line(partial)
  return feed
}
