// One webhook request, made safely: the address connected to is the one checked (the lookup hook
// validates what DNS answers, and IP literals are checked before connecting), no redirect is
// followed (Node's client never follows one; a 3xx is a failure), 5 s to connect, 10 s in all,
// and at most 1 KiB of the answer read.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns'
import { request as httpRequest, type Agent as HttpAgent, type ClientRequest } from 'node:http'
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { isForbiddenAddress } from './address.js'

const CONNECT_MS = 5_000
const TOTAL_MS = 10_000
const KEEP_BYTES = 1_024

export interface SendResult {
  /** the answer's status, when one came */
  status?: number
  /** why there was no answer, or why it is not a success */
  error?: string
  durationMs: number
}

// A name that does not resolve and one that resolves only to forbidden addresses fail alike, so
// an owner cannot learn from a delivery's error which internal names exist.
const NAME_ERRORS = new Set(['FORBIDDEN_ADDRESS', 'ENOTFOUND', 'EAI_AGAIN', 'ENODATA', 'EAI_NODATA', 'EAI_NONAME'])
const NO_ADDRESS = 'no address a webhook may reach (the name does not resolve, or only to forbidden addresses)'

/** A lookup that answers only addresses a webhook (or a link check, src/link-checks/) may reach. */
export function safeLookup(allowPrivate: boolean): LookupFunction {
  return ((hostname: string, options: LookupOneOptions | LookupAllOptions, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err)
      const ok = allowPrivate ? addresses : addresses.filter((a) => !isForbiddenAddress(a.address))
      if (ok.length === 0) return callback(Object.assign(new Error(`${hostname} resolves to a forbidden address`), { code: 'FORBIDDEN_ADDRESS' }))
      if ((options as LookupAllOptions).all) return callback(null, ok)
      callback(null, ok[0]!.address, ok[0]!.family)
    })
  }) as LookupFunction
}

/**
 * `agents`: keep-alive agents to reuse connections (each was checked when it was opened, by the
 * same lookup hook); without them, one connection per request.
 */
export function postWebhook(
  target: URL,
  headers: Record<string, string>,
  body: string,
  allowPrivate: boolean,
  agents?: { http: HttpAgent; https: HttpsAgent },
): Promise<SendResult> {
  const started = performance.now()
  const done = (r: Omit<SendResult, 'durationMs'>): SendResult => ({ ...r, durationMs: Math.round(performance.now() - started) })
  const host = target.hostname.replace(/^\[|\]$/g, '')
  if (!allowPrivate && isIP(host) !== 0 && isForbiddenAddress(host)) {
    return Promise.resolve(done({ error: `${host} is a forbidden address` }))
  }
  return new Promise((resolve) => {
    let settled = false
    /** `clean`: the answer was read to its end, so a kept-alive connection may serve again. */
    const finish = (r: Omit<SendResult, 'durationMs'>, clean = false) => {
      if (settled) return
      settled = true
      clearTimeout(total)
      clearTimeout(connect)
      resolve(done(r))
      if (!clean) req.destroy()
    }
    const https = target.protocol === 'https:'
    const request = https ? httpsRequest : httpRequest
    const req: ClientRequest = request(target, {
      method: 'POST',
      agent: agents === undefined ? false : https ? agents.https : agents.http,
      lookup: safeLookup(allowPrivate),
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'link-service-webhooks' },
    })
    const connect = setTimeout(() => finish({ error: `no connection within ${CONNECT_MS / 1000} s` }), CONNECT_MS)
    const total = setTimeout(() => finish({ error: `no complete answer within ${TOTAL_MS / 1000} s` }), TOTAL_MS)
    req.on('socket', (socket) => {
      // A kept-alive connection is already open (and was checked when it was).
      if (!socket.connecting) return clearTimeout(connect)
      socket.once('connect', () => {
        clearTimeout(connect)
        // The lookup hook checked this address already; an IP literal was checked above.
        if (!allowPrivate && socket.remoteAddress !== undefined && isForbiddenAddress(socket.remoteAddress)) {
          finish({ error: `${socket.remoteAddress} is a forbidden address` })
        }
      })
    })
    req.on('error', (err: NodeJS.ErrnoException) => finish({ error: NAME_ERRORS.has(err.code ?? '') ? NO_ADDRESS : (err.code ?? err.message) }))
    req.on('response', (res) => {
      const status = res.statusCode ?? 0
      const outcome = status >= 200 && status < 300 ? { status } : { status, error: `answered ${status}` }
      let kept = 0
      res.on('data', (chunk: Buffer) => {
        kept += chunk.length
        if (kept >= KEEP_BYTES) finish(outcome) // the rest is not read
      })
      res.on('end', () => finish(outcome, true))
      res.on('error', () => finish(outcome))
    })
    req.end(body)
  })
}
