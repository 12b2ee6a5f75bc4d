// The embedded database's DATA_DIR is held by one process at a time (PGlite does not lock it,
// and two processes on one directory would corrupt it), but a lock whose holder is gone never
// keeps the service from starting (docs/decisions.md).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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

  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  /** A pid that was running a moment ago and is not any more. */
  const deadPid = () => Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).toString())

  /** Starts a server on `dir` with this lock file already there, and says whether it served. */
  async function startsWith(root: string, name: string, lock: string): Promise<boolean> {
    const dir = join(root, name)
    const first = await startServer({ DATA_DIR: dir }) // a migrated directory, then closed
    await first.close().catch(() => {})
    writeFileSync(join(dir, 'link-service.pid'), lock)
    try {
      const srv = await startServer({ DATA_DIR: dir })
      await srv.close()
      return true
    } catch (err) {
      assert.match(String(err), /in use by process|already open/)
      return false
    }
  }

  test('a lock left by a process that is gone, by an earlier life of this pid, or from another boot is taken over', async ({ root }) => {
    assert.ok(await startsWith(root, 'dead', `${deadPid()}\n${boot}\n`), 'dead pid')
    assert.ok(await startsWith(root, 'own', `${process.pid}\n${boot}\n`), 'this very pid')
    assert.ok(await startsWith(root, 'reboot', `${process.ppid}\nsome-earlier-boot\n`), 'another boot')
    assert.ok(await startsWith(root, 'garbage', 'not a pid at all'), 'unreadable')
  })

  test('a lock held by a running process of this boot is respected', async ({ root }) => {
    assert.not.ok(await startsWith(root, 'held', `${process.ppid}\n${boot}\n`))
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

  test.run()
}
