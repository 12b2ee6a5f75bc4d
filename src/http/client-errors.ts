// Requests that Node's HTTP parser refuses never reach the app. They still get our error shape
// and an X-Request-Id, written straight to the socket, which is then closed. Responses to
// requests pipelined before the refused one go out first (RFC 9112 9.3.2: in request order).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { addCorsHeaders } from './cors.js'
import { badRequest, HttpError } from './errors.js'
import type { Headers } from './reply.js'
import { errorReply } from './reply.js'
import { requestIdFor } from './request-id.js'

/** What the app's router says of a method and request target it has no route for: 404 or 405. */
export type RouteError = (method: string, target: string) => HttpError

const PARSER_ERRORS: Record<string, () => HttpError> = {
  HPE_HEADER_OVERFLOW: () => new HttpError(431, 'REQUEST_HEADER_FIELDS_TOO_LARGE', 'request headers are too large'),
  ERR_HTTP_REQUEST_TIMEOUT: () => new HttpError(408, 'REQUEST_TIMEOUT', 'request took too long'),
}

const LINGER_MS = 10_000

// RFC 9110 5.6.2: a method is a token; llhttp knows only the registered ones.
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/1\.[01]\r?$/

interface ParserError extends NodeJS.ErrnoException {
  rawPacket?: Buffer
  bytesParsed?: number
}

interface SocketState {
  /** requests on this socket whose responses are still being produced */
  open: Set<IncomingMessage>
  /** after a refused request: the complete ones among them, to be answered before its error */
  before?: Set<IncomingMessage>
  /** the refused request's error, written once `before` is empty */
  answer?: () => void
}

const sockets = new WeakMap<Duplex, SocketState>()

/**
 * Notes a response that may finish after later pipelined requests are parsed. The synchronous
 * redirect path needs none: its response is queued on the socket before the parser reads on.
 */
export function trackResponse(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket
  let state = sockets.get(socket)
  if (state === undefined) sockets.set(socket, (state = { open: new Set() }))
  state.open.add(req)
  res.once('close', () => {
    state.open.delete(req)
    if (state.before?.delete(req) && state.before.size === 0) state.answer!()
    if (state.open.size === 0 && state.answer === undefined) sockets.delete(socket)
  })
}

export function answerClientError(err: ParserError, socket: Duplex, routeError: RouteError): void {
  let state = sockets.get(socket)
  if (state?.answer !== undefined) return // answered, or to be: the parser only repeats itself
  if (state === undefined) sockets.set(socket, (state = { open: new Set() }))
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy()
    return
  }
  let error = PARSER_ERRORS[err.code ?? '']?.() ?? badRequest('malformed HTTP request')
  const headers: Headers = {}
  let supplied: string | undefined
  const request = err.code === 'HPE_INVALID_METHOD' ? refusedRequest(err) : undefined
  if (request !== undefined) {
    // An unknown method is still a request for a path: 404, or 405 with Allow (contract §2).
    error = routeError(request.method, request.target)
    supplied = request.requestId
    if (request.origin) addCorsHeaders(headers)
  }
  const answer = () => writeRawError(socket, error, requestIdFor(supplied), headers)
  // Requests received whole came before the refused one: their answers go first. One still
  // being received (a broken chunked body, a body too slow) is the refused one itself: its
  // handler waits for a body that will not come, and ends when the socket does.
  const before = new Set([...state.open].filter((req) => req.complete))
  state.answer = answer
  if (before.size === 0) return answer()
  state.before = before
  socket.pause()
}

/** Answers on a socket the http module has handed over (or given up on), then closes it. */
export function writeRawError(socket: Duplex, err: HttpError, requestId: string, extra: Headers = {}): void {
  if (!socket.writable) return
  const reply = errorReply(err)
  const body = JSON.stringify(reply.body)
  let head = `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status]}\r\n`
  const headers: Headers = {
    ...reply.headers,
    ...extra,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'x-request-id': requestId,
    connection: 'close',
  }
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`
  socket.end(`${head}\r\n${body}`)
  // The client may never close its side; the socket must not outlive the answer by much.
  setTimeout(() => socket.destroy(), LINGER_MS).unref()
}

/**
 * The request line and the headers we answer with, read from the bytes the parser refused. The
 * refused request starts at the line where parsing stopped (earlier pipelined ones precede it).
 */
function refusedRequest(err: ParserError): { method: string; target: string; requestId?: string; origin: boolean } | undefined {
  const raw = err.rawPacket
  if (raw === undefined) return undefined
  const stop = Math.min(Math.max(err.bytesParsed ?? 0, 0), raw.length)
  const start = stop === 0 ? 0 : raw.lastIndexOf(0x0a, stop - 1) + 1
  const lines = raw.toString('latin1', start, Math.min(raw.length, start + 16 * 1024)).split('\n')
  const line = REQUEST_LINE.exec(lines[0] ?? '')
  if (line === null) return undefined
  let requestId: string | undefined
  let origin = false
  for (const header of lines.slice(1)) {
    if (header === '\r' || header === '') break
    const colon = header.indexOf(':')
    const name = header.slice(0, colon).toLowerCase()
    if (name === 'x-request-id') requestId = header.slice(colon + 1).trim()
    else if (name === 'origin') origin = true
  }
  return { method: line[1]!, target: line[2]!, requestId, origin }
}
