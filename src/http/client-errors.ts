// Requests that Node's HTTP parser refuses (and CONNECT, which it hands over) never reach the
// app. They still get our error shape and an X-Request-Id, written straight to the socket, which
// is then closed. Responses to requests pipelined before the refused one go out first (RFC 9112
// 9.3.2: in request order).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { addCorsHeaders } from './cors.js'
import { badRequest, HttpError, routeNotFound } from './errors.js'
import type { HeaderMap } from './reply.js'
import { errorReply, NOSNIFF } from './reply.js'
import { requestIdFor } from './request-id.js'

/** What the app's router says of a request target it has no route for: 404, or 405 with Allow. */
export type RouteError = (method: string, target: string) => HttpError

const PARSER_ERRORS: Record<string, () => HttpError> = {
  HPE_HEADER_OVERFLOW: () => new HttpError(431, 'REQUEST_HEADER_FIELDS_TOO_LARGE', 'request headers are too large'),
  ERR_HTTP_REQUEST_TIMEOUT: () => new HttpError(408, 'REQUEST_TIMEOUT', 'request took too long'),
}

/** How long an answered socket may stay open, and how long an answer may wait for earlier ones. */
const LINGER_MS = 10_000
const WAIT_FOR_EARLIER_MS = 30_000

// The end of a request line. The line may begin with the tail of an earlier request's body
// (which need not end in a newline), so only the target is read, and the method is not needed:
// llhttp refuses only methods that no route of ours has, so the path alone decides 404 or 405.
const TARGET = / (\S+) HTTP\/1\.[01]\r?$/

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

function stateOf(socket: Duplex): SocketState {
  let state = sockets.get(socket)
  if (state === undefined) sockets.set(socket, (state = { open: new Set() }))
  return state
}

/**
 * Notes a response that may finish after later pipelined requests are parsed. The synchronous
 * redirect path needs none: its response is queued on the socket before the parser reads on.
 */
export function trackResponse(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket
  const state = stateOf(socket)
  state.open.add(req)
  res.once('close', () => {
    state.open.delete(req)
    if (state.before?.delete(req) && state.before.size === 0) state.answer!()
    if (state.open.size === 0 && state.answer === undefined) sockets.delete(socket)
  })
}

export function answerClientError(err: ParserError, socket: Duplex, routeError: RouteError): void {
  if (sockets.get(socket)?.answer !== undefined) return // answered, or to be: the parser repeats itself
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy()
    return
  }
  let error = PARSER_ERRORS[err.code ?? '']?.() ?? badRequest('malformed HTTP request')
  const headers: HeaderMap = {}
  let supplied: string | undefined
  const request = err.code === 'HPE_INVALID_METHOD' ? refusedRequest(err) : undefined
  if (request !== undefined) {
    // An unknown method is still a request for a path: 404, or 405 with Allow (contract §2).
    error = routeError('', request.target)
    supplied = request.requestId
    if (request.origin) addCorsHeaders(headers)
  }
  answerAfterEarlier(socket, () => writeRawError(socket, error, requestIdFor(supplied), headers))
}

/** CONNECT's target is "host:port", never one of our paths (Node would otherwise just hang up). */
export function answerConnect(req: IncomingMessage, socket: Duplex): void {
  const requestId = requestIdFor(req.headers['x-request-id'] as string | undefined)
  const headers: HeaderMap = {}
  if (req.headers.origin !== undefined) addCorsHeaders(headers)
  answerAfterEarlier(socket, () => writeRawError(socket, routeNotFound(), requestId, headers))
}

/**
 * Requests received whole came before the refused one: their answers go first. One still being
 * received (a broken chunked body, a body too slow) is the refused one itself: its handler waits
 * for a body that will not come, and ends when the socket does. An earlier answer that never
 * comes (a hung handler) gives up the socket after WAIT_FOR_EARLIER_MS.
 */
function answerAfterEarlier(socket: Duplex, answer: () => void): void {
  // Node has let go of this socket (for CONNECT it leaves no 'error' listener at all): a reset
  // from the client must end it, not the process.
  socket.on('error', () => socket.destroy())
  const state = stateOf(socket)
  state.answer = answer
  const before = new Set([...state.open].filter((req) => req.complete))
  if (before.size === 0) return answer()
  state.before = before
  socket.pause()
  destroyLater(socket, WAIT_FOR_EARLIER_MS, () => state.before!.size > 0)
}

/** Destroys the socket after `ms` (if `still()`), without keeping it in memory once it has closed. */
function destroyLater(socket: Duplex, ms: number, still: () => boolean = () => true): void {
  const timer = setTimeout(() => still() && socket.destroy(), ms).unref()
  socket.once('close', () => clearTimeout(timer))
}

/** Writes one of our JSON errors straight to a socket the http module has let go of, then closes it. */
function writeRawError(socket: Duplex, err: HttpError, requestId: string, extra: HeaderMap): void {
  if (!socket.writable) return
  const reply = errorReply(err)
  const body = JSON.stringify(reply.body)
  let head = `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status]}\r\n`
  const headers: HeaderMap = {
    ...reply.headers,
    ...extra,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'x-request-id': requestId,
    [NOSNIFF[0]]: NOSNIFF[1],
    connection: 'close',
  }
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`
  socket.end(`${head}\r\n${body}`)
  // The client may never close its side; the socket must not outlive the answer by much.
  destroyLater(socket, LINGER_MS)
}

/**
 * The target and the headers we answer with, read from the bytes the parser refused: the line
 * where parsing stopped, and the header lines after it (as far as this packet holds them).
 */
function refusedRequest(err: ParserError): { target: string; requestId?: string; origin: boolean } | undefined {
  const raw = err.rawPacket
  if (raw === undefined) return undefined
  const stop = Math.min(Math.max(err.bytesParsed ?? 0, 0), raw.length)
  const start = stop === 0 ? 0 : raw.lastIndexOf(0x0a, stop - 1) + 1
  const lines = raw.toString('latin1', start, Math.min(raw.length, start + 16 * 1024)).split('\n')
  const target = TARGET.exec(lines[0] ?? '')?.[1]
  if (target === undefined) return undefined
  let requestId: string | undefined
  let origin = false
  for (const header of lines.slice(1)) {
    if (header === '\r' || header === '') break
    const colon = header.indexOf(':')
    const name = header.slice(0, colon).toLowerCase()
    if (name === 'x-request-id') requestId = header.slice(colon + 1).trim()
    else if (name === 'origin') origin = true
  }
  return { target, requestId, origin }
}
