// Threat-feed formats, detected line by line (blank lines and comments ignored): one host per
// line; hosts files ("0.0.0.0 host", "127.0.0.1 host", several hosts a line); Adblock-style
// "||host^"; URL lists and URLhaus-style CSV (the host of each URL). Every host comes out in the
// block list's form (links/hosts.ts). A line that is none of these is counted, never fatal.
import { hostOf, normalizeHost } from '../links/hosts.js'

export interface ParsedFeed {
  hosts: Set<string>
  /** lines that were not comments, not blank, and gave no host */
  invalid: number
  /** the first few invalid lines, for the operator: 1-based line number and the text (shortened) */
  samples: Array<{ line: number; text: string }>
}

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
  let t = text.endsWith('.') ? text.slice(0, -1) : text
  if (t.startsWith('*.')) t = t.slice(2) // a wildcard names the domain: subdomains are blocked anyway
  if (PLAIN_HOST.test(t) && !ALL_DIGITS.test(t) && t.length <= 253) return t
  return normalizeHost(t)
}

function hostOfUrl(text: string): string | undefined {
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
  const words = line.replace(/\s#.*$/, '').trim().split(/\s+/)
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

/** Parses a whole feed. */
export function parseFeed(text: string): ParsedFeed {
  const feed: ParsedFeed = { hosts: new Set(), invalid: 0, samples: [] }
  let start = 0
  let lineNo = 0
  while (start < text.length) {
    let end = text.indexOf('\n', start)
    if (end === -1) end = text.length
    lineNo++
    const raw = text.slice(start, end)
    start = end + 1
    const first = raw.trimStart()[0]
    // Comments: # (hosts files, URLhaus), ! and [ (Adblock's comments and its "[Adblock Plus]" header).
    if (first === undefined || first === '#' || first === '!' || first === '[') continue
    const hosts = hostsOfLine(raw)
    if (hosts === undefined) {
      feed.invalid++
      if (feed.samples.length < MAX_SAMPLES) feed.samples.push({ line: lineNo, text: raw.trim().slice(0, MAX_SAMPLE_CHARS) })
      continue
    }
    for (const host of hosts) feed.hosts.add(host)
  }
  return feed
}
