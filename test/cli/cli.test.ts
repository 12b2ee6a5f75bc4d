// The CLI's frame: a command it does not know, or none, is one line on stderr and a
// non-zero status; help lists the commands.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runCli } from '../helpers/cli.js'

test('no command: usage on stdout, a one-line reason on stderr, status 1', async () => {
  const r = await runCli([], { DATA_DIR: '/nonexistent' })
  assert.is(r.status, 1)
  assert.match(r.stdout, /^usage: link-service/)
  assert.is(r.stderr, 'link-service: no command given\n')
})

test('an unknown command is refused in one line, before the database is opened', async () => {
  const r = await runCli(['frobnicate', 'now'], { DATA_DIR: '/nonexistent' })
  assert.is(r.status, 1)
  assert.is(r.stderr.trim().split('\n').length, 1)
  assert.match(r.stderr, /unknown command: frobnicate now/)
})

test('an invalid configuration exits 78, as the service does', async () => {
  const r = await runCli(['help'], { PORT: 'x' })
  assert.is(r.status, 78)
  assert.match(r.stderr, /configuration error/)
})

test.run()
