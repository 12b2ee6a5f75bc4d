// WORKERS > 1: `node server.js` forks that many workers sharing the port, restarts a
// worker that dies, and stops them all cleanly on SIGTERM. Needs DATABASE_URL.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { freePort, spawnServer, type ServerProcess } from '../helpers/process.js'
import { until } from '../helpers/wait.js'

if (process.env.DATABASE_URL === undefined) {
  process.stdout.write('workers.test: not run: WORKERS > 1 needs DATABASE_URL (npm test runs it in .ci/run)\n')
} else {
  const test = suite<ServerProcess & { metricsPort: number }>('WORKERS=2')

  test.before(async (ctx) => {
    ctx.metricsPort = await freePort()
    Object.assign(ctx, await spawnServer({ WORKERS: '2', METRICS_PORT: String(ctx.metricsPort) }, 2))
  })
  test.after((ctx) => {
    if (ctx.child.exitCode === null) ctx.child.kill('SIGKILL')
  })

  test('two workers share the port and both serve requests', async ({ lines, port, logSoFar }) => {
    const workers = new Set(lines.filter((l) => l.msg === 'listening').map((l) => l.pid))
    assert.is(workers.size, 2)
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { connection: 'close' } })
      assert.is(res.status, 200)
      await res.text()
    }
    await until(15_000, () => new Set(lines.filter((l) => l.msg === 'request').map((l) => l.pid)).size === 2, { every: 50, why: logSoFar })
  })

  // Issue 12 §4: with WORKERS > 1 the primary serves the metrics, summed over the workers.
  test('the primary serves METRICS_PORT with the requests of both workers added up', async ({ lines, metricsPort, port }) => {
    const pids = new Set(lines.filter((l) => l.msg === 'request' && l.path === '/healthz').map((l) => l.pid))
    assert.is(pids.size, 2, 'both workers answered /healthz in the test before')
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
    assert.is(res.status, 200)
    const text = await res.text()
    const line = text.split('\n').find((l) => l.startsWith('link_service_http_requests_total{route="GET /healthz",status_class="2xx"} '))
    assert.ok(line !== undefined, 'the series is there')
    assert.is(Number(line!.slice(line!.lastIndexOf(' ') + 1)), 20, 'the 20 answers of the test before, from both workers')
    assert.is((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404, 'not on the public port')
  })

  test('a worker that dies is restarted', async ({ lines, logSoFar }) => {
    const before = lines.filter((l) => l.msg === 'listening').map((l) => l.pid)
    process.kill(before[0]!, 'SIGKILL')
    await until(15_000, () => lines.some((l) => l.msg === 'worker died; restarting it'), { every: 50, why: logSoFar })
    await until(15_000, () => lines.filter((l) => l.msg === 'listening').length === 3, { every: 50, why: logSoFar })
    const fresh = lines.filter((l) => l.msg === 'listening').at(-1)!.pid
    assert.not.ok(before.includes(fresh))
  })

  // A stop that comes within the restart delay of a death must not fork a worker nobody stops.
  test('SIGTERM just after a worker died stops every worker, restarts none, and the primary exits 0', async ({ child, lines, logSoFar }) => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const listening = () => lines.filter((l) => l.msg === 'listening').length
    const before = listening()
    process.kill(lines.filter((l) => l.msg === 'listening').at(-1)!.pid, 'SIGKILL')
    await until(15_000, () => lines.filter((l) => l.msg === 'worker died; restarting it').length === 2, { every: 50, why: logSoFar })
    child.kill('SIGTERM')
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running after 8 s'), 8_000))])
    assert.is(code, 0)
    assert.is(listening(), before, 'no worker was started during the stop')
  })

  test.run()
}
