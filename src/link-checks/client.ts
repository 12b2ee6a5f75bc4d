// One destination check: follows a target's redirect chain hop by hop and says what it found.
// The same address rules as webhooks (the DNS-checked lookup of webhooks/send.ts, IP literals
// checked before connecting, the connected address checked again), HEAD first and a GET of at
// most 64 KiB when HEAD is refused, 10 s a request, at most 5 redirects, one request at a time
// per host (Hosts.take) and a host that answers 429 left alone for a while. Every hop's host is
// looked up on the block list before it is asked anything: a blocked hop is not visited.
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP } from 'node:net'
import { canonicalHost } from '../links/hosts.js'
import { isForbiddenAddress } from '../webhooks/address.js'
import { safeLookup } from '../webhooks/send.js'

const REQUEST_MS = 10_000
const MAX_REDIRECTS = 5
const KEEP_BYTES = 64 * 1024
/** A 429 without a usable Retry-After: wait this long (the second time twice that, and so on, up to a day) */
export const BACKOFF_S = 300
/** HEAD answered with one of these: asked again with GET */
const HEAD_REFUSED = new Set([405, 501])

export type Result = 'ok' | 'broken' | 'unreachable' | 'flagged' | 'deferred'

export interface Finding {
  result: Result
  httpStatus: number | null
  /** the last url reached (or the blocked hop) */
  finalUrl: string | null
  detail: string | null
  /** 'deferred': seconds until the host may be asked again */
  retryS?: number
}

/** What a check needs of the database: the block list and the hosts' turns. */
export interface Hosts {
  blocked(host: string): Promise<boolean>
  /** waits for the host's turn: a release to call after the request, or the seconds it asked us to wait */
  take(host: string): Promise<(() => Promise<void>) | number>
  /** the host answered 429: ask it nothing for `seconds` (undefined: the doubling default) */
  backoff(host: string, seconds: number | undefined): Promise<number>
}

interface Answer {
  status: number
  location: string | undefined
  retryAfter: string | undefined
}

export interface AskOptions {
  allowPrivate: boolean
  userAgent: string
  /** each request's time limit (tests shorten it) */
  timeoutMs?: number
}

export async function checkTarget(target: string, hosts: Hosts, options: AskOptions): Promise<Finding> {
  let url: URL
  try {
    url = new URL(target)
  } catch {
    return { result: 'broken', httpStatus: null, finalUrl: target, detail: 'the url is not valid' }
  }
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      // An app link or mailto: at the end of a chain is where it leads; nothing to ask.
      return { result: 'ok', httpStatus: null, finalUrl: url.href, detail: `leads to a ${url.protocol} link, not checked further` }
    }
    const host = canonicalHost(url.hostname)
    if (await hosts.blocked(host)) {
      // The destination itself is the block list's to stop, and to restore when it is taken off
      // the list (a flag would outlive that until the next check): it is asked again later.
      if (hop === 0) return { result: 'deferred', httpStatus: null, finalUrl: url.href, detail: `${host} is on the block list, which stops the link itself`, retryS: BACKOFF_S }
      return { result: 'flagged', httpStatus: null, finalUrl: url.href, detail: `redirect ${hop} leads to ${host}, which is on the block list` }
    }
    const turn = await hosts.take(host)
    if (typeof turn === 'number') return { result: 'deferred', httpStatus: null, finalUrl: url.href, detail: `${host} asked to wait`, retryS: turn }
    let answer: Answer | string
    try {
      answer = await ask(url, 'HEAD', options)
      if (typeof answer !== 'string' && HEAD_REFUSED.has(answer.status)) answer = await ask(url, 'GET', options)
    } finally {
      await turn()
    }
    if (typeof answer === 'string') return { result: 'unreachable', httpStatus: null, finalUrl: url.href, detail: answer }
    if (answer.status === 429) {
      const retryS = await hosts.backoff(host, retryAfterSeconds(answer.retryAfter))
      return { result: 'deferred', httpStatus: 429, finalUrl: url.href, detail: `${host} answered 429`, retryS }
    }
    if (answer.status >= 300 && answer.status < 400 && answer.location !== undefined) {
      if (hop === MAX_REDIRECTS) return { result: 'broken', httpStatus: answer.status, finalUrl: url.href, detail: `more than ${MAX_REDIRECTS} redirects` }
      try {
        url = new URL(answer.location, url)
      } catch {
        return { result: 'broken', httpStatus: answer.status, finalUrl: url.href, detail: 'redirects to a url that is not valid' }
      }
      continue
    }
    const broken = answer.status >= 400
    return { result: broken ? 'broken' : 'ok', httpStatus: answer.status, finalUrl: url.href, detail: broken ? `answered ${answer.status}` : null }
  }
}

/** Retry-After in seconds (a number of seconds or an HTTP date), or undefined. */
function retryAfterSeconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(1, Math.ceil((at - Date.now()) / 1000))
}

/** One request; a string says why no answer came. Only the first 64 KiB of a GET's body is read. */
function ask(url: URL, method: 'HEAD' | 'GET', { allowPrivate, userAgent, timeoutMs = REQUEST_MS }: AskOptions): Promise<Answer | string> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (!allowPrivate && isIP(host) !== 0 && isForbiddenAddress(host)) return Promise.resolve(`${host} is a private or local address, which is not checked`)
  return new Promise((resolve) => {
    let settled = false
    const finish = (r: Answer | string) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(r)
      req.destroy()
    }
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest
    const req = request(url, { method, agent: false, lookup: safeLookup(allowPrivate), headers: { 'user-agent': userAgent, accept: '*/*' } })
    const timer = setTimeout(() => finish(`no answer within ${timeoutMs / 1000} s`), timeoutMs)
    req.on('socket', (socket) => {
      socket.once('connect', () => {
        if (!allowPrivate && socket.remoteAddress !== undefined && isForbiddenAddress(socket.remoteAddress)) finish(`${socket.remoteAddress} is a private or local address, which is not checked`)
      })
    })
    req.on('error', (err: NodeJS.ErrnoException) => finish(describe(err)))
    req.on('response', (res) => {
      const answer: Answer = { status: res.statusCode ?? 0, location: res.headers.location, retryAfter: res.headers['retry-after'] }
      let kept = 0
      res.on('data', (chunk: Buffer) => {
        kept += chunk.length
        if (kept >= KEEP_BYTES) finish(answer)
      })
      res.on('end', () => finish(answer))
      res.on('error', () => finish(answer))
    })
    req.end()
  })
}

/** An owner may read this: names do not tell which internal names exist (as for webhooks). */
function describe(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'FORBIDDEN_ADDRESS':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ENODATA':
    case 'EAI_NODATA':
    case 'EAI_NONAME':
      return 'the name does not resolve to an address that is checked'
    case 'ECONNREFUSED':
      return 'the connection was refused'
    case 'ECONNRESET':
      return 'the connection was reset'
    case 'ETIMEDOUT':
      return 'no connection'
    default:
      return err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT') ? `TLS failed (${err.code})` : (err.code ?? 'the request failed')
  }
}
