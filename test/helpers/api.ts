// A small HTTP client for black-box tests: fetch with JSON and a chosen client address. Every
// response is checked against the OpenAPI document (docs/openapi.json), so no test can meet an
// answer the document does not describe.
import { randomBytes } from 'node:crypto'
import { checkResponse } from './openapi.js'

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
