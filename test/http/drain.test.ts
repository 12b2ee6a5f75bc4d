// Issue 8: a clean drain on SIGTERM/SIGINT. Every answer after the signal carries
// `Connection: close`; idle keep-alive connections end normally (a FIN, never a reset); an
// in-flight request finishes.
import { connect, type Socket } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer } from '../helpers/server.js'
import { sleep, until } from '../helpers/wait.js'

function open(url: string): Promise<{ socket: Socket; received: () => string; ended: Promise<'end' | 'reset'> }> {
  const { port } = new URL(url)
  const socket = connect(Number(port), '127.0.0.1')
  let text = ''
  socket.on('data', (c: Buffer) => (text += c.toString()))
  const ended = new Promise<'end' | 'reset'>((resolve) => {
    socket.once('end', () => resolve('end'))
    socket.once('error', () => resolve('reset'))
  })
  return new Promise((resolve) => socket.once('connect', () => resolve({ socket, received: () => text, ended })))
}

test('after the signal: Connection: close on every answer, idle keep-alive connections end with a FIN, in-flight requests finish', async () => {
  const srv = await startServer()
  const idle = await open(srv.url)
  idle.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
  await until(5_000, () => idle.received().includes('\r\n\r\n{'))
  assert.match(idle.received(), /connection: keep-alive/i)
  // A request in flight when the drain starts: headers now, its body after.
  const busy = await open(srv.url)
  const body = '{"username":"nobody-here","password":"x"}'
  busy.socket.write(`POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`)
  await sleep(100)
  const closing = srv.service.close()
  assert.is(await idle.ended, 'end', 'the idle connection ended normally')
  busy.socket.write(body)
  await until(5_000, () => /\r\n\r\n\{/.test(busy.received()))
  assert.match(busy.received(), /^HTTP\/1\.1 401 /)
  assert.match(busy.received(), /connection: close/i)
  assert.is(await busy.ended, 'end')
  await closing
})

test('a request that reached the server before the signal is answered, though not yet read: never a FIN without an answer', async () => {
  const srv = await startServer()
  const conns = await Promise.all(Array.from({ length: 8 }, () => open(srv.url)))
  for (const c of conns) c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
  await until(5_000, () => conns.every((c) => c.received().includes('\r\n\r\n{')))
  const answered = conns.map((c) => c.received().length)
  // Each idle connection's next request is in the server's socket buffer, unread: the drain
  // starts in the same turn, as it does when the event loop was busy (a long query on the
  // embedded database) while the requests arrived.
  for (const c of conns) c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
  const closing = srv.service.close()
  for (const [i, c] of conns.entries()) {
    assert.is(await c.ended, 'end')
    const second = c.received().slice(answered[i])
    assert.match(second, /^HTTP\/1\.1 200 /, `connection ${i}: its request was answered`)
    assert.match(second, /connection: close/i)
  }
  await closing
})

test.run()
