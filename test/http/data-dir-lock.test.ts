// The embedded database's DATA_DIR is held by one process at a time (PGlite does not lock it,
// and two processes on one directory would corrupt it), but a lock whose holder is gone never
// keeps the service from starting (docs/decisions.md). The lock is a Unix socket the holder
// listens on; the second-process case itself is in lifecycle.test.ts.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer } from '../helpers/server.js'

if (process.env.DATABASE_URL !== undefined) {
  process.stdout.write('data-dir-lock.test: not run: the lock guards the embedded database only\n')
} else {
  const test = suite<{ root: string }>('DATA_DIR lock')
  test.before((ctx) => {
    ctx.root = mkdtempSync(join(tmpdir(), 'link-service-lock-'))
  })
  test.after(({ root }) => rmSync(root, { recursive: true, force: true }))

  /** Leaves a lock socket behind as a holder killed with SIGKILL would: the file, and nobody listening. */
  async function abandonedSocket(path: string): Promise<void> {
    const child = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    await new Promise((resolve) => child.stdout!.once('data', resolve))
    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))
    assert.ok(existsSync(path), 'the dead holder left its socket file')
  }

  test('a lock socket left by a holder that is gone is taken over', async ({ root }) => {
    const dir = join(root, 'abandoned')
    mkdirSync(dir, { mode: 0o700 })
    await abandonedSocket(join(dir, 'link-service.lock'))
    const srv = await startServer({ DATA_DIR: dir })
    assert.is((await fetch(`${srv.url}/healthz`)).status, 200)
    await srv.close()
    assert.not.ok(existsSync(join(dir, 'link-service.lock')), 'the lock is gone after a clean stop')
  })

  test('a lock socket someone answers on is respected, whatever its pid', async ({ root }) => {
    const dir = join(root, 'held')
    mkdirSync(dir, { mode: 0o700 })
    const holder = createServer((c) => c.destroy())
    await new Promise<void>((resolve) => holder.listen(join(dir, 'link-service.lock'), resolve))
    try {
      let err: unknown
      await startServer({ DATA_DIR: dir }).catch((e: unknown) => (err = e))
      assert.match(String(err), /in use by another running link service/)
    } finally {
      await new Promise((resolve) => holder.close(resolve))
    }
  })

  test('the same DATA_DIR cannot be opened twice in one process', async ({ root }) => {
    const dir = join(root, 'twice')
    const first = await startServer({ DATA_DIR: dir })
    try {
      let err: unknown
      await startServer({ DATA_DIR: dir }).catch((e: unknown) => (err = e))
      assert.match(String(err), /already open in this process/)
    } finally {
      await first.close()
    }
  })

  // A start that fails after opening the database must not leave DATA_DIR locked (a port in use).
  test('a start that fails after opening the database releases DATA_DIR', async ({ root }) => {
    const dir = join(root, 'port-taken')
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    try {
      const port = String((taken.address() as { port: number }).port)
      let err: unknown
      await startServer({ DATA_DIR: dir, PORT: port }).catch((e: unknown) => (err = e))
      assert.match(String(err), /EADDRINUSE/)
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
    const srv = await startServer({ DATA_DIR: dir })
    assert.is((await fetch(`${srv.url}/healthz`)).status, 200)
    await srv.close()
  })

  test.run()
}
