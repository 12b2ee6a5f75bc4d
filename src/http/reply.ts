// Handlers return a Reply; only this module writes one to the response.
import type { ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { HttpError } from './errors.js'

export type HeaderMap = Record<string, string>

export interface Reply {
  status: number
  headers?: HeaderMap
  body?: unknown
}

const JSON_HEADER = 'content-type'
const JSON_TYPE = 'application/json; charset=utf-8'
/** On every response: a browser must never guess another type for our JSON (and run it). */
export const NOSNIFF = ['x-content-type-options', 'nosniff'] as const

export const json = (status: number, body: unknown, headers?: HeaderMap): Reply => ({ status, body, headers })
export const noContent = (): Reply => ({ status: 204 })
/** A body that is not JSON (an image, a ready document): sent as is, with its own type. */
export const bytes = (status: number, contentType: string, body: Buffer, headers?: HeaderMap): Reply => ({
  status,
  body,
  headers: { ...headers, 'content-type': contentType },
})

/**
 * A body made as it is sent (an export): chunked, each chunk asked for only when the client has
 * taken the last (backpressure). Once the head is out, a failure can only cut the connection.
 */
export const streamed = (status: number, contentType: string, chunks: AsyncIterable<Buffer | string>, headers?: HeaderMap): Reply => ({
  status,
  body: Readable.from(chunks, { objectMode: false }),
  headers: { ...headers, 'content-type': contentType },
})

export function send(res: ServerResponse, reply: Reply, base: HeaderMap): void {
  const headers: HeaderMap = { ...base, ...reply.headers, [NOSNIFF[0]]: NOSNIFF[1] }
  if (reply.body instanceof Readable) {
    res.writeHead(reply.status, headers)
    pipeline(reply.body, res).catch(() => res.destroy())
    return
  }
  if (reply.body === undefined) {
    if (reply.status !== 204 && reply.status !== 304) headers['content-length'] = '0'
    res.writeHead(reply.status, headers)
    res.end()
    return
  }
  let payload: Buffer
  if (Buffer.isBuffer(reply.body)) payload = reply.body
  else {
    payload = Buffer.from(JSON.stringify(reply.body))
    headers[JSON_HEADER] = JSON_TYPE
  }
  headers['content-length'] = String(payload.length)
  res.writeHead(reply.status, headers)
  res.end(payload)
}

export interface Prerendered {
  status: number
  /** more headers, as a flat name, value list */
  extra: readonly string[]
  /** ASCII JSON: a string, so that Node sends it with the head in one write (a Buffer takes two) */
  body: string
  contentLength: string
}

/** An error (one without headers of its own) rendered once, for a path that answers it often; `extra` adds headers. */
export function prerender(err: HttpError, extra: readonly string[] = []): Prerendered {
  if (Object.keys(err.headers).length > 0) throw new Error(`${err.code} has headers: not prerenderable`)
  const body = JSON.stringify(errorReply(err).body)
  if (!/^[\x20-\x7e]*$/.test(body)) throw new Error(`${err.code} is not ASCII: not prerenderable`)
  return { status: err.status, extra, body, contentLength: String(body.length) }
}

export function sendPrerendered(res: ServerResponse, p: Prerendered, requestId: string): void {
  res.writeHead(p.status, [JSON_HEADER, JSON_TYPE, 'content-length', p.contentLength, 'x-request-id', requestId, NOSNIFF[0], NOSNIFF[1], ...p.extra])
  res.end(p.body, 'latin1')
}

export function errorReply(err: HttpError): Reply {
  const body: { code: string; message: string; errors?: unknown } = { code: err.code, message: err.message }
  if (err.errors !== undefined) body.errors = err.errors
  return { status: err.status, headers: err.headers, body }
}
