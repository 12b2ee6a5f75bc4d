// Request bodies: declared-size check, media type, a streamed byte counter, strict UTF-8 and JSON.
import type { IncomingMessage } from 'node:http'
import { bodyTooLarge, invalidBody, unsupportedEncoding, unsupportedMediaType } from './errors.js'

export const MAX_BODY_BYTES = 65_536

/** Thrown when the client went away mid-body: there is nobody left to answer. */
export class ClientGone extends Error {}

/** 413 before reading when Content-Length already says too much (contract §2 check order). */
export function checkDeclaredLength(req: IncomingMessage, max = MAX_BODY_BYTES): void {
  if (declaresTooMuch(req, max)) throw bodyTooLarge(max)
}

/** True when Content-Length declares more than the limit (the body need not be read to know). */
export function declaresTooMuch(req: IncomingMessage, max = MAX_BODY_BYTES): boolean {
  const declared = req.headers['content-length']
  // With Transfer-Encoding present, Node ignores Content-Length (RFC 9112 6.3); so do we.
  return declared !== undefined && req.headers['transfer-encoding'] === undefined && Number(declared) > max
}

export function hasBody(req: IncomingMessage): boolean {
  const declared = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (declared !== undefined && declared !== '0')
}

/** application/json, any parameters, but a charset other than utf-8 is refused (contract §2). */
export function isJsonMediaType(header: string | undefined): boolean {
  if (header === undefined) return false
  const [type = '', ...params] = header.split(';')
  if (type.trim().toLowerCase() !== 'application/json') return false
  for (const param of params) {
    const eq = param.indexOf('=')
    if (eq === -1) continue
    if (param.slice(0, eq).trim().toLowerCase() !== 'charset') continue
    const value = param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase()
    if (value !== 'utf-8') return false // "utf8" is not a registered charset name (IANA)
  }
  return true
}

/** Streams the body through a byte counter; rejects with 413 as soon as byte max + 1 arrives. */
export function readBody(req: IncomingMessage, max = MAX_BODY_BYTES): Promise<Buffer> {
  // Gone before we asked (the handler awaited something first): no event would ever say so.
  if (req.destroyed) return Promise.reject(new ClientGone('client closed the request before its body was read'))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let total = 0
    const cleanup = () => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onGone)
      req.off('close', onGone)
    }
    const onData = (chunk: Buffer) => {
      total += chunk.length
      if (total > max) {
        cleanup()
        // Keep reading (and dropping) what is already on its way: closing a socket with unread
        // data makes the kernel send RST, which can destroy our 413 before the client reads it.
        req.resume()
        reject(bodyTooLarge(max))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resolve(Buffer.concat(chunks, total))
    }
    const onGone = () => {
      cleanup()
      reject(new ClientGone('client closed the request before its body ended'))
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onGone)
    req.on('close', onGone)
  })
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** Parses a body that must be a UTF-8 JSON object; anything else is 422 INVALID_FORM_BODY. */
export function parseJsonObject(bytes: Buffer): Record<string, unknown> {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    throw invalidBody('body is not valid UTF-8')
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw invalidBody('body is not valid JSON')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidBody('body must be a JSON object')
  }
  return value as Record<string, unknown>
}

/** Media type (415), then the counted read (413), then UTF-8 and JSON (422). */
export async function readJson(req: IncomingMessage, max = MAX_BODY_BYTES): Promise<Record<string, unknown>> {
  if (!isJsonMediaType(req.headers['content-type'])) throw unsupportedMediaType()
  // RFC 9110 8.4: a content coding we cannot decode (gzip, ...) is an unsupported representation;
  // so is a transfer coding other than chunked, which Node undoes and we would not.
  const coding = req.headers['content-encoding']
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') throw unsupportedEncoding()
  const transfer = req.headers['transfer-encoding']
  if (transfer !== undefined && transfer.trim().toLowerCase() !== 'chunked') throw unsupportedEncoding()
  return parseJsonObject(await readBody(req, max))
}

/**
 * A JSON object, or an HTML form (application/x-www-form-urlencoded, UTF-8) as an object of its
 * first value per name: what a browser's form and an API client send alike. 415 for anything else.
 */
export async function readJsonOrForm(req: IncomingMessage, max = MAX_BODY_BYTES): Promise<Record<string, unknown>> {
  const type = req.headers['content-type']?.split(';', 1)[0]!.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') return readJson(req, max)
  const coding = req.headers['content-encoding']
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') throw unsupportedEncoding()
  let text: string
  try {
    text = utf8.decode(await readBody(req, max))
  } catch (err) {
    if (err instanceof TypeError) throw invalidBody('body is not valid UTF-8')
    throw err
  }
  const form: Record<string, unknown> = {}
  for (const [name, value] of new URLSearchParams(text)) if (!Object.hasOwn(form, name)) form[name] = value
  return form
}

/** For routes that take no body: the size limit still holds (contract §3, logout). */
export async function discardBody(req: IncomingMessage, max = MAX_BODY_BYTES): Promise<void> {
  if (hasBody(req)) await readBody(req, max)
}
