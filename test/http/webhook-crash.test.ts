// At least once across a crash: an event committed with its change survives kill -9 of the node
// before it was delivered, and the next node to start delivers it.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser } from '../helpers/api.js'
import { run, type Run } from '../helpers/child-server.js'
import { Receiver } from '../helpers/receiver.js'
import { until } from '../helpers/wait.js'
import { LEASE_SECONDS } from '../../src/webhooks/queries.js'

const test = suite<{ dir: string }>('webhooks across kill -9')
test.before((ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'link-service-webhook-crash-'))
})
test.after(({ dir }) => rmSync(dir, { recursive: true, force: true }))

async function started(env: Record<string, string>): Promise<{ r: Run; url: string }> {
  const r = run({ WEBHOOK_ALLOW_HTTP: 'on', WEBHOOK_ALLOW_PRIVATE: 'on', WEBHOOK_RETRY_SCHEDULE: '1', WEBHOOK_POLL_MS: '200', ...env })
  await until(30_000, () => r.lines.some((l) => l.msg === 'listening'), { why: () => r.stderr })
  return { r, url: r.lines.find((l) => l.msg === 'listening')!.url as string }
}

test('kill -9 between the commit and the delivery loses no event', async ({ dir }) => {
  const db: Record<string, string> = process.env.DATABASE_URL === undefined ? { DATA_DIR: join(dir, 'data') } : { DATABASE_URL: process.env.DATABASE_URL }
  const rx = await new Receiver().start()
  await rx.stop() // the receiver is down: nothing can be delivered before the crash
  const first = await started(db)
  const user = await newUser(first.url)
  const hook = await call(first.url, 'POST', '/api/v1/webhooks', { token: user.token, body: { url: rx.url, events: ['link.created'] } })
  assert.is(hook.status, 201)
  const links = await Promise.all([0, 1, 2].map(() => newLink(first.url, user.token)))
  first.r.child.kill('SIGKILL')
  await first.r.exit
  await rx.start()
  const second = await started(db)
  try {
    // A delivery leased by the dead node waits out its lease; one it had not claimed goes at once.
    await until((LEASE_SECONDS + 15) * 1000, () => links.every((l) => rx.of('link.created').some((r) => r.event.data.code === l.code)))
  } finally {
    second.r.child.kill('SIGTERM')
    await second.r.exit
    await rx.stop()
  }
})

test.run()
