// Running it (contract §8): `node server.js` applies migrations, serves, and on SIGTERM/SIGINT
// stops cleanly with exit 0 — also when the signal arrives during start-up. A configuration
// error exits 78; a second process on the same embedded DATA_DIR is refused.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { run } from '../helpers/child-server.js'
import { sleep, until } from '../helpers/wait.js'

const test = suite<{ dir: string }>('node server.js')
test.before((ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'link-service-lifecycle-'))
})
test.after(({ dir }) => rmSync(dir, { recursive: true, force: true }))

// When DATABASE_URL is set the tests run on it; otherwise on a fresh embedded directory.
const dbEnv = (dir: string, name: string): Record<string, string> =>
  process.env.DATABASE_URL === undefined ? { DATA_DIR: join(dir, name) } : { DATABASE_URL: process.env.DATABASE_URL }

test('serves after migrating, and SIGTERM stops it with exit 0', async ({ dir }) => {
  const r = run(dbEnv(dir, 'a'))
  await until(20_000, () => r.lines.some((l) => l.msg === 'listening'))
  const url = r.lines.find((l) => l.msg === 'listening')!.url as string
  const res = await fetch(`${url}/healthz`)
  assert.is(res.status, 200)
  await res.text()
  r.child.kill('SIGTERM')
  assert.is(await r.exit, 0, r.stderr)
  assert.ok(r.lines.some((l) => l.msg === 'stopped'))
})

test('SIGINT during start-up waits for start-up, then stops cleanly with exit 0', async ({ dir }) => {
  const r = run(dbEnv(dir, 'b'))
  // 'starting' is logged once the handlers are in place; a signal before that is Node's default.
  await until(20_000, () => r.lines.some((l) => l.msg === 'starting'))
  r.child.kill('SIGINT')
  assert.is(await r.exit, 0, r.stderr)
  assert.ok(r.lines.some((l) => l.msg === 'stopped'))
})

test('a configuration error exits 78 with the reason on stderr', async () => {
  const r = run({ PORT: 'eighty' })
  assert.is(await r.exit, 78)
  assert.match(r.stderr, /PORT must be an integer/)
})

if (process.env.DATABASE_URL === undefined) {
  // PGlite does not lock its directory; two processes on one would corrupt it.
  test('a second process on the same embedded DATA_DIR is refused', async ({ dir }) => {
    const first = run({ DATA_DIR: join(dir, 'c') })
    await until(20_000, () => first.lines.some((l) => l.msg === 'listening'))
    const second = run({ DATA_DIR: join(dir, 'c') })
    assert.is(await second.exit, 1)
    assert.match(second.stderr, /in use by another running link service/)
    first.child.kill('SIGTERM')
    assert.is(await first.exit, 0)
  })
}

test.run()
