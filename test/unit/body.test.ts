// Unit tests of the body reader (src/http/body.ts): media type, byte counter, UTF-8 and JSON.
import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import {
  checkDeclaredLength,
  ClientGone,
  declaresTooMuch,
  discardBody,
  hasBody,
  isJsonMediaType,
  MAX_BODY_BYTES,
  parseJsonObject,
  readBody,
  readJson,
} from '../../src/http/body.js'
import { HttpError } from '../../src/http/errors.js'

/** A stream Readable with headers, standing in for an IncomingMessage; chunks are pushed by the test. */
function fakeRequest(headers: Record<string, string> = {}): Readable & IncomingMessage {
  const stream = new Readable({ read() {} })
  return Object.assign(stream, { headers, rawHeaders: [] }) as unknown as Readable & IncomingMessage
}

/** The rejection of a promise (fails the test when it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (err) {
    return err
  }
  throw new Error('expected the promise to reject')
}

/** What a call throws (fails the test when it returns). */
function thrown(fn: () => unknown): unknown {
  try {
    fn()
  } catch (err) {
    return err
  }
  throw new Error('expected the call to throw')
}

function assertHttpError(err: unknown, status: number, code: string): HttpError {
  assert.instance(err, HttpError)
  const e = err as HttpError
  assert.is(e.status, status)
  assert.is(e.code, code)
  return e
}

/** Settles within ms, or rejects with 'still pending'. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('still pending')), ms)
  })
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer))
}

// ---------------------------------------------------------------------------------------------
const media = suite('body: isJsonMediaType')

// contract §2: application/json with parameters allowed; a charset other than utf-8 is refused
media('accepts application/json in any letter case, with parameters and a utf-8 charset', () => {
  for (const value of [
    'application/json',
    'application/JSON',
    'Application/Json',
    ' application/json ',
    'application/json; charset=utf-8',
    'application/json; charset=UTF-8',
    'application/json;charset=utf-8',
    'application/json; charset="utf-8"',
    'application/json; CHARSET=Utf-8',
    'application/json; foo=bar',
    'application/json; foo=bar; charset=utf-8',
  ]) {
    assert.ok(isJsonMediaType(value), value)
  }
})

// contract §2: 415 for a JSON-taking endpoint without application/json, or with another charset
media('refuses a missing, different or look-alike media type and any non-utf-8 charset', () => {
  for (const value of [
    undefined,
    '',
    'text/plain',
    'text/json',
    'application/jsonx',
    'application/json-patch+json',
    'application/x-json',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/*',
    'json',
    'application/json; charset=latin1',
    'application/json; charset=iso-8859-1',
    'application/json; charset=utf-16',
    'application/json; charset=',
    'application/json; charset=utf-8; charset=latin1',
  ]) {
    assert.not.ok(isJsonMediaType(value), String(value))
  }
})

media.run()

// ---------------------------------------------------------------------------------------------
const parse = suite('body: parseJsonObject')

// spec §4: API bodies are UTF-8 JSON; contract §2: a JSON object is accepted as is
parse('returns the parsed object of a UTF-8 JSON object', () => {
  assert.equal(parseJsonObject(Buffer.from('{"url":"https://ex\u00e4mple.com/\u{1F600}","n":[1,{"a":null}]}')), {
    url: 'https://ex\u00e4mple.com/\u{1F600}',
    n: [1, { a: null }],
  })
  assert.equal(parseJsonObject(Buffer.from(' \n{}\t ')), {})
})

// contract §2: 422 INVALID_FORM_BODY when the body is not UTF-8
parse('refuses bytes that are not UTF-8 with 422 INVALID_FORM_BODY', () => {
  const cases: Array<[string, number[]]> = [
    ['0xff', [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]],
    ['overlong "/"', [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]],
    ['encoded surrogate', [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]],
    ['truncated sequence', [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe2, 0x82, 0x22, 0x7d]],
    ['latin1 é', [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]],
  ]
  for (const [name, bytes] of cases) {
    const e = assertHttpError(thrown(() => parseJsonObject(Buffer.from(bytes))), 422, 'INVALID_FORM_BODY')
    assert.is(e.errors, undefined, name)
  }
})

// contract §2: 422 INVALID_FORM_BODY when the body is not JSON, or not a JSON object
parse('refuses malformed JSON, an empty body and JSON that is not an object with 422 INVALID_FORM_BODY', () => {
  for (const text of ['', ' ', '{', '{"url":', "{'a':1}", '{"a":1,}', '{} {}', 'nul', '[]', '[{}]', 'null', '"text"', '42', '1e3', 'true', 'false']) {
    const e = assertHttpError(thrown(() => parseJsonObject(Buffer.from(text))), 422, 'INVALID_FORM_BODY')
    assert.is(e.errors, undefined, text)
    assert.type(e.message, 'string')
  }
})

parse.run()

// ---------------------------------------------------------------------------------------------
const read = suite('body: readBody, readJson, discardBody, checkDeclaredLength')

// spec §8: request body (global) 65,536 bytes (64 KiB)
read('the global limit is 65,536 bytes', () => {
  assert.is(MAX_BODY_BYTES, 65_536)
})

// STYLE (body reader): stream Buffer chunks, concat once
read('readBody concatenates every chunk until the end', async () => {
  const req = fakeRequest()
  const p = readBody(req, 100)
  req.push(Buffer.from('ab'))
  req.push(Buffer.from('cd'))
  req.push(Buffer.from('\u00e9'))
  req.push(null)
  assert.equal((await p).toString('utf8'), 'abcd\u00e9')
})

// spec §7: 413 only for a body *over* 65,536 bytes
read('readBody accepts exactly the limit', async () => {
  const req = fakeRequest()
  const p = readBody(req)
  for (let i = 0; i < 4; i++) req.push(Buffer.alloc(16_384, 0x61))
  req.push(null)
  assert.is((await p).length, 65_536)
})

// contract §2: body read with a byte counter (413 as soon as byte 65,537 arrives)
read('readBody rejects with 413 as soon as byte 65,537 arrives, without waiting for the end', async () => {
  const req = fakeRequest()
  const p = readBody(req)
  for (let i = 0; i < 4; i++) req.push(Buffer.alloc(16_384, 0x61))
  await new Promise((r) => setImmediate(r))
  req.push(Buffer.from('b')) // byte 65,537; the stream never ends
  const err = await within(rejection(p), 1000)
  const e = assertHttpError(err, 413, 'REQUEST_BODY_TOO_LARGE')
  assert.is(e.headers.connection, 'close')
  // it stops listening: what still arrives is not counted, buffered or rejected again
  assert.is(req.listenerCount('data'), 0)
  assert.is(req.listenerCount('end'), 0)
  req.push(Buffer.alloc(16_384))
  req.push(null)
  req.destroy()
})

// STYLE (body reader): past the limit, reject exactly once and remove every listener
read('readBody rejects exactly once when a single chunk crosses the limit', async () => {
  const req = fakeRequest()
  const p = readBody(req, 10)
  req.push(Buffer.alloc(11))
  req.push(Buffer.alloc(50))
  req.push(null)
  assertHttpError(await rejection(p), 413, 'REQUEST_BODY_TOO_LARGE')
  req.destroy()
})

// contract §2: 500 only for the unexpected — a client that leaves mid-body is not an error to answer
read('readBody rejects with ClientGone when the client closes before the body ends', async () => {
  const req = fakeRequest()
  const p = readBody(req, 100)
  req.push(Buffer.from('abc'))
  await new Promise((r) => setImmediate(r))
  req.destroy()
  assert.instance(await within(rejection(p), 1000), ClientGone)
})

// contract §2: a broken request stream is the client going away, not a 500
read('readBody rejects with ClientGone on a stream error', async () => {
  const req = fakeRequest()
  const p = readBody(req, 100)
  req.destroy(new Error('ECONNRESET'))
  assert.instance(await within(rejection(p), 1000), ClientGone)
})

// contract §2: media type (415) is checked before the body is read
read('readJson refuses a wrong media type with 415 without reading the body', async () => {
  const cases: Array<Record<string, string>> = [{}, { 'content-type': 'text/plain' }, { 'content-type': 'application/json; charset=latin1' }]
  for (const headers of cases) {
    const req = fakeRequest(headers)
    req.push(Buffer.from('{not json'))
    const err = await rejection(readJson(req))
    assertHttpError(err, 415, 'UNSUPPORTED_MEDIA_TYPE')
    assert.is(req.listenerCount('data'), 0)
    assert.is(req.readableFlowing, null, 'the body was never consumed')
    req.destroy()
  }
})

// contract §2: application/json; charset=UTF-8 is accepted and the body parsed
read('readJson returns the object of a good JSON body', async () => {
  const req = fakeRequest({ 'content-type': 'application/json; charset=UTF-8' })
  const p = readJson(req)
  req.push(Buffer.from('{"url":'))
  req.push(Buffer.from('"https://example.com/"}'))
  req.push(null)
  assert.equal(await p, { url: 'https://example.com/' })
})

// contract §2 order: the byte counter (413) comes before JSON parsing (422)
read('readJson answers 413, not 422, for an oversized body that is not JSON', async () => {
  const req = fakeRequest({ 'content-type': 'application/json' })
  const p = readJson(req, 8)
  req.push(Buffer.from('not json at all'))
  assertHttpError(await within(rejection(p), 1000), 413, 'REQUEST_BODY_TOO_LARGE')
  req.destroy()
})

// contract §2: 422 INVALID_FORM_BODY when the body is not JSON (an empty body is not JSON)
read('readJson answers 422 for an empty body', async () => {
  const req = fakeRequest({ 'content-type': 'application/json' })
  const p = readJson(req)
  req.push(null)
  assertHttpError(await rejection(p), 422, 'INVALID_FORM_BODY')
})

// contract §2: declared Content-Length over the limit → 413 before reading
read('checkDeclaredLength refuses a declared length over 65,536 and allows up to it', () => {
  const e = assertHttpError(thrown(() => checkDeclaredLength(fakeRequest({ 'content-length': '65537' }))), 413, 'REQUEST_BODY_TOO_LARGE')
  assert.is(e.headers.connection, 'close')
  assert.not.throws(() => checkDeclaredLength(fakeRequest({ 'content-length': '65536' })))
  assert.not.throws(() => checkDeclaredLength(fakeRequest({ 'content-length': '0' })))
  assert.not.throws(() => checkDeclaredLength(fakeRequest({})))
  assert.throws(() => checkDeclaredLength(fakeRequest({ 'content-length': '1000000000000' })), (x: unknown) => x instanceof HttpError && x.status === 413)
  assert.throws(() => checkDeclaredLength(fakeRequest({ 'content-length': '11' }), 10), (x: unknown) => x instanceof HttpError && x.status === 413)
})

// contract §2: declared Content-Length over the limit (413) is known before reading; RFC 9112 6.3
read('declaresTooMuch is true only for a Content-Length over the limit without Transfer-Encoding', () => {
  assert.is(declaresTooMuch(fakeRequest({ 'content-length': '65537' })), true)
  assert.is(declaresTooMuch(fakeRequest({ 'content-length': '65536' })), false)
  assert.is(declaresTooMuch(fakeRequest({})), false)
  assert.is(declaresTooMuch(fakeRequest({ 'content-length': '65537', 'transfer-encoding': 'chunked' })), false)
  assert.is(declaresTooMuch(fakeRequest({ 'content-length': '6' }), 5), true)
})

// RFC 9112 6.3: Transfer-Encoding overrides Content-Length; the streamed counter applies instead
read('checkDeclaredLength ignores Content-Length when Transfer-Encoding is present (RFC 9112 6.3)', () => {
  assert.not.throws(() => checkDeclaredLength(fakeRequest({ 'content-length': '99999', 'transfer-encoding': 'chunked' })))
})

// contract §2/§3: routes without a body still count any body sent (the size limit holds)
read('hasBody is true for a non-zero Content-Length or any Transfer-Encoding', () => {
  assert.is(hasBody(fakeRequest({})), false)
  assert.is(hasBody(fakeRequest({ 'content-length': '0' })), false)
  assert.is(hasBody(fakeRequest({ 'content-length': '5' })), true)
  assert.is(hasBody(fakeRequest({ 'transfer-encoding': 'chunked' })), true)
})

// contract §2: 413 on every route, also those that take no body (logout: "the size limit still holds")
read('discardBody reads and drops a body within the limit, and refuses one over it with 413', async () => {
  const small = fakeRequest({ 'content-length': '3' })
  const p = discardBody(small, 10)
  small.push(Buffer.from('abc'))
  small.push(null)
  assert.is(await p, undefined)

  const big = fakeRequest({ 'transfer-encoding': 'chunked' })
  const q = discardBody(big, 10)
  big.push(Buffer.alloc(6))
  big.push(Buffer.alloc(6))
  assertHttpError(await within(rejection(q), 1000), 413, 'REQUEST_BODY_TOO_LARGE')
  big.destroy()
})

// contract §3: logout has no request body — nothing to read when none is sent
read('discardBody does not touch a request without a body', async () => {
  const req = fakeRequest({})
  await within(discardBody(req), 1000)
  assert.is(req.readableFlowing, null)
})

read.run()
