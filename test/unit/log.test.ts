// contract §8: one JSON log line per request (method, path, status, duration, request id).
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createLogger } from '../../src/log.js'

function capture(level: 'debug' | 'info' | 'warn' | 'error' = 'info') {
  const writes: string[] = []
  const log = createLogger(level, (t) => writes.push(t))
  const lines = () => writes.join('').trimEnd().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>)
  return { log, writes, lines }
}

test('an access line is one JSON object with method, path, status, duration and request id', () => {
  const { log, lines } = capture()
  log.access('GET', '/r/abcdEFGH', 302, 0.042, 'f3b0c44298fc1c149afbf4c8996fb924')
  log.flush()
  const [line] = lines()
  assert.equal({ ...line, time: undefined, pid: undefined }, {
    time: undefined, level: 'info', msg: 'request', pid: undefined, method: 'GET', path: '/r/abcdEFGH', status: 302, duration_ms: 0.042, request_id: 'f3b0c44298fc1c149afbf4c8996fb924',
  })
  assert.match(String(line!.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  assert.is(line!.pid, process.pid)
})

test('quotes, backslashes, controls and non-ASCII in a path or request id are escaped, not injected', () => {
  const { log, lines } = capture()
  const path = '/x"y\\z\u0001ä'
  const id = 'a"b\\c","level":"error'
  log.access('GET', path, 404, 1, id)
  log.flush()
  const [line] = lines()
  assert.is(line!.path, path)
  assert.is(line!.request_id, id)
  assert.is(line!.level, 'info')
})

// Issue 13: requests are timed only when their access line will be written.
test('below info (LOG_LEVEL=warn) the logger says it writes no access line, and writes none', () => {
  for (const [level, writes] of [['debug', true], ['info', true], ['warn', false], ['error', false]] as const) {
    const { log, lines } = capture(level)
    assert.is(log.writesAccess, writes, level)
    log.access('GET', '/r/abcdEFGH', 302, 0.1, 'id')
    log.flush()
    assert.is(lines().length, writes ? 1 : 0, level)
  }
})

test('lines of one event-loop turn are written together, once', async () => {
  const { log, writes, lines } = capture()
  for (let i = 0; i < 5; i++) log.access('GET', '/healthz', 200, 0.1, `id${i}`)
  assert.is(writes.length, 0, 'nothing written synchronously')
  await new Promise((r) => setImmediate(r))
  assert.is(writes.length, 1)
  assert.is(lines().length, 5)
})

test('LOG_LEVEL filters: at warn there are no access or info lines; errors carry name, message and stack', () => {
  const { log, lines } = capture('warn')
  log.access('GET', '/', 301, 0.1, 'x')
  log.info('hello')
  log.error('boom', { err: new TypeError('bad thing') })
  log.flush()
  const all = lines()
  assert.is(all.length, 1)
  const err = all[0]!.err as Record<string, string>
  assert.is(err.name, 'TypeError')
  assert.is(err.message, 'bad thing')
  assert.match(err.stack!, /TypeError: bad thing/)
})

test.run()
