// contract §8: on SIGTERM the service stops accepting, lets in-flight requests finish
// (bounded by SHUTDOWN_TIMEOUT_MS), writes pending visits, closes the database.
import { connect } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser } from '../helpers/api.js'
import { startServer } from '../helpers/server.js'
import { sleep } from '../helpers/wait.js'

test('a request in flight when shutdown starts still gets its answer; new connections are refused', async () => {
  const srv = await startServer()
  const user = await newUser(srv.url)
  const { port } = new URL(srv.url)
  const body = JSON.stringify({ url: 'https://example.com/in-flight' })
  const socket = connect(Number(port), '127.0.0.1')
  await new Promise((r) => socket.once('connect', r))
  let answer = ''
  socket.on('data', (c: Buffer) => (answer += c.toString()))
  const ended = new Promise((r) => socket.once('close', r))
  // Headers and half the body now; the rest only after shutdown has begun.
  socket.write(
    `POST /api/v1/links HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
  )
  await sleep(100)
  const closing = srv.service.close()
  await sleep(100)
  const refused = await fetch(srv.url + '/healthz').then(
    () => false,
    () => true,
  )
  assert.ok(refused, 'no new connections once shutdown has begun')
  socket.write(body.slice(10))
  await closing
  await ended
  assert.match(answer, /^HTTP\/1\.1 201 /)
  assert.match(answer, /"url":"https:\/\/example\.com\/in-flight"/)
})

test('shutdown writes the visits counted since the last flush', async () => {
  const srv = await startServer({ VISIT_FLUSH_MS: '60000' })
  const user = await newUser(srv.url)
  const link = await newLink(srv.url, user.token)
  for (let i = 0; i < 3; i++) assert.is((await call(srv.url, 'GET', `/r/${link.code}`)).status, 302)
  const sql = srv.service.db.sql
  const before = await sql<{ visits: number }[]>`select visits::int as visits from links where code = ${link.code}`
  assert.is(before[0]!.visits, 0, 'not flushed yet')
  // Look at the database right after the shutdown's own flush, before it closes the database.
  const counted = new Promise<number>((resolve) => {
    const flush = srv.service.deps.visits.flush.bind(srv.service.deps.visits)
    srv.service.deps.visits.flush = async () => {
      await flush()
      const [row] = await sql<{ visits: number }[]>`select visits::int as visits from links where code = ${link.code}`
      resolve(row!.visits)
    }
  })
  await srv.service.close()
  assert.is(await counted, 3)
})

test.run()
