// contract §2: 503 SERVICE_UNAVAILABLE when the database is unreachable; anything unexpected
// is a 500. isConnectionError draws that line for the errors the driver hands us.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { isConnectionError, isConnectionLost } from '../../src/db/errors.js'
import { insertLink } from '../../src/links/queries.js'
import type { Sql } from '../../src/db/types.js'

const test = suite('isConnectionError')

const socketError = (code: string, syscall: string) => Object.assign(new Error(code), { code, syscall })
const serverError = (code: string) => Object.assign(new Error(code), { code })

test('the driver losing or failing to open its connection is unavailable', () => {
  for (const code of ['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT']) {
    assert.ok(isConnectionError(serverError(code)), code)
  }
})

test('socket errors from Node are unavailable', () => {
  for (const [code, syscall] of [
    ['ECONNREFUSED', 'connect'],
    ['ECONNRESET', 'read'],
    ['EPIPE', 'write'],
    ['ENOTFOUND', 'getaddrinfo'],
    ['EAI_AGAIN', 'getaddrinfo'],
    ['ENOENT', 'connect'], // the embedded database's socket is gone
    ['EHOSTUNREACH', 'connect'],
  ]) {
    assert.ok(isConnectionError(socketError(code!, syscall!)), code)
  }
})

test('SQLSTATEs of a database that cannot serve now are unavailable, whatever the statement', () => {
  for (const code of [
    '08006', // connection_failure
    '28P01', // invalid_password, raised while connecting
    '3D000', // the database does not exist (dropped)
    '53300', // too_many_connections
    '55000', // "database is not currently accepting connections"
    '57P01', // admin_shutdown
    '57P03', // cannot_connect_now (starting up)
    '57014', // query_canceled
    '58030', // io_error
    '25006', // read_only_sql_transaction: a standby after a fail-over
    '40P01', // deadlock_detected: this transaction was the victim
    '40001', // serialization_failure
  ]) {
    assert.ok(isConnectionError(serverError(code)), code)
  }
})

test('a create whose statement answers no row (an answer lost with its connection) is a lost connection, not a crash', async () => {
  const emptyAnswer = (() => Promise.resolve([])) as unknown as Sql
  const link = { url: 'https://example.com/', location: 'https://example.com/', host: 'example.com', expiresAt: null, startsAt: null, maxVisits: null, passwordHash: null, tags: [], rules: [], title: null, description: null, imageUrl: null }
  const err = await insertLink(emptyAnswer, '00000000-0000-0000-0000-000000000000', link, 50, { burst: 60, perMinute: 30, youngHours: 0 }).then(() => undefined, (e: unknown) => e)
  assert.ok(err instanceof Error, 'it fails')
  assert.ok(isConnectionError(err), 'as a 503')
  assert.ok(isConnectionLost(err), 'worth a retry')
})

test('errors of the statement itself, and anything else, are not', () => {
  for (const err of [
    serverError('23505'), // unique_violation
    serverError('22P02'), // invalid_text_representation
    serverError('42601'), // syntax_error
    serverError('XX000'), // internal_error
    serverError('ERR_INVALID_ARG_TYPE'), // a programming error, no system call
    new TypeError('x is undefined'),
    Object.assign(new Error('bare'), { code: 42 }),
    undefined,
    null,
    'a string',
  ]) {
    assert.not.ok(isConnectionError(err), String((err as { code?: unknown } | null)?.code ?? err))
  }
})

test.run()
