// A small HTTP client for black-box tests: fetch with JSON and a chosen client address. Every
// response is checked against the OpenAPI document (docs/openapi.json), so no test can meet an
// answer the document does not describe.
import { randomBytes } from 'node:crypto'
import * as assert from 'uvu/assert'
import { checkResponse } from './openapi.js'
import { header, type RawResponse } from './raw.js'

export interface Res {
  status: number
  headers: Headers
  /** parsed JSON body, or undefined when there is none */
  body: any
  text: string
}

export interface Options {
  body?: unknown
  token?: string
  headers?: Record<string, string>
  /** client address, sent as X-Forwarded-For (the test server trusts 127.0.0.1) */
  ip?: string
  /** aborts the request (fetch then rejects with an AbortError) */
  signal?: AbortSignal
}

/** A fresh random client address, so a test gets its own rate-limit bucket. */
export function randomIp(): string {
  const b = randomBytes(3)
  return `10.${b[0]}.${b[1]}.${b[2]}`
}

export async function call(base: string, method: string, path: string, opts: Options = {}): Promise<Res> {
  const headers: Record<string, string> = { 'x-forwarded-for': opts.ip ?? randomIp(), ...opts.headers }
  let body: string | undefined
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`
  const res = await fetch(base + path, { method, headers, body, redirect: 'manual', signal: opts.signal })
  const text = await res.text()
  let parsed: unknown
  if (text !== '' && (res.headers.get('content-type') ?? '').startsWith('application/json')) parsed = JSON.parse(text)
  const received = { status: res.status, headers: res.headers, body: parsed, text }
  checkResponse(method, path, headers, received)
  return received
}

let counter = 0
/** A username nobody else in this run has. */
export function uniqueName(prefix = 'u'): string {
  return `${prefix}${process.pid.toString(36)}${(counter++).toString(36)}${randomBytes(2).toString('hex')}`
}

export interface User {
  id: string
  username: string
  password: string
  token: string
}

/** Registers a new account and logs it in. */
export async function newUser(base: string, password = 'correct horse'): Promise<User> {
  const username = uniqueName()
  const reg = await call(base, 'POST', '/api/v1/users', { body: { username, password, display_name: 'Test User' } })
  if (reg.status !== 201) throw new Error(`register failed: ${reg.status} ${reg.text}`)
  const token = await login(base, username, password)
  return { id: reg.body.id, username, password, token }
}

export async function login(base: string, username: string, password: string): Promise<string> {
  const res = await call(base, 'POST', '/api/v1/auth/login', { body: { username, password } })
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`)
  return res.body.token
}

export async function newLink(base: string, token: string, url = 'https://example.com/'): Promise<any> {
  const res = await call(base, 'POST', '/api/v1/links', { token, body: { url } })
  if (res.status !== 201) throw new Error(`create link failed: ${res.status} ${res.text}`)
  return res.body
}

const JSON_TYPE = 'application/json; charset=utf-8'
/** The codes whose body may also list `errors` (one per field or query parameter). */
const LISTING_CODES = new Set(['INVALID_FORM_BODY', 'INVALID_QUERY'])

/**
 * An error response (contract §2), read by fetch or off a raw socket: this status (and code, or a
 * code matching a pattern), our JSON content type, exactly {code, message} (and `errors` for
 * field errors), a non-empty message, and a request id.
 */
export function assertError(res: Res | RawResponse, status: number, code: string | RegExp, what = ''): void {
  const isRaw = 'head' in res
  const headerOf = (name: string) => (isRaw ? header(res.head, name) : res.headers.get(name))
  assert.is(res.status, status, isRaw ? `${what}\n${res.head}\n${res.body}` : `${what} ${res.text}`)
  assert.is(headerOf('content-type'), JSON_TYPE, what)
  let body: any = res.body
  if (isRaw) {
    try {
      body = JSON.parse(res.body)
    } catch {
      assert.unreachable(`${what}: body is not JSON: ${res.body}`)
    }
  }
  const keys = Object.keys(body ?? {}).sort()
  assert.equal(keys, LISTING_CODES.has(body?.code) && keys.includes('errors') ? ['code', 'errors', 'message'] : ['code', 'message'], what)
  if (typeof code === 'string') assert.is(body.code, code, what)
  else assert.ok(code.test(body.code), `${what}: ${body.code}`)
  assert.type(body.message, 'string', what)
  assert.ok(body.message.length > 0, what)
  assert.ok(headerOf('x-request-id'), `${what}: no X-Request-Id`)
}

/** An http URL of exactly `bytes` UTF-8 bytes, padded with `pad` (1 or 2 bytes each). */
export function urlOfBytes(bytes: number, pad = 'a'): string {
  const head = 'https://example.com/'
  const padBytes = Buffer.byteLength(pad)
  const rest = bytes - head.length
  return head + pad.repeat(Math.floor(rest / padBytes)) + 'a'.repeat(rest % padBytes)
}

/** Asserts a 422 INVALID_FORM_BODY whose `errors` are exactly these [field, code] pairs (any order). */
export function assertFieldErrors(res: Res, expected: Array<[string, string]>, label = ''): void {
  assert.is(res.status, 422, `${label}: status (${res.text})`)
  assert.is(res.body?.code, 'INVALID_FORM_BODY', `${label}: code`)
  assert.type(res.body.message, 'string', `${label}: message`)
  assert.ok(Array.isArray(res.body.errors), `${label}: errors is an array`)
  const got = (res.body.errors as Array<{ field: string; code: string }>).map((e) => `${e.field}:${e.code}`).sort()
  assert.equal(got, expected.map(([f, c]) => `${f}:${c}`).sort(), `${label}: errors`)
  for (const e of res.body.errors as Array<Record<string, unknown>>) {
    assert.equal(Object.keys(e).sort(), ['code', 'field', 'message'], `${label}: field error shape`)
    assert.type(e.message, 'string')
    assert.ok((e.message as string).length > 0, `${label}: field error message is not empty`)
  }
}

/** Asserts a 422 INVALID_QUERY whose errors name exactly these parameters, in order. */
export function assertQueryError(res: Res, fields: string[]): void {
  assertError(res, 422, 'INVALID_QUERY')
  assert.equal(res.body.errors.map((e: { field: string }) => e.field), fields, res.text)
}

/**
 * One failed login from an address of its own: the server's KDF threads start on its first
 * password check (about 0.3 s, longer than a rate-limit token's 0.2 s refill), so tests that
 * count tokens call this first.
 */
export async function startPasswordThreads(base: string): Promise<void> {
  await call(base, 'POST', '/api/v1/auth/login', { ip: randomIp(), body: { username: uniqueName(), password: 'starts the threads' } })
}
