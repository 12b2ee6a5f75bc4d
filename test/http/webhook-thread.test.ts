// On PostgreSQL a node's webhook deliveries run on a thread of their own (src/webhooks/deliveries.ts):
// they go on while the event loop that answers redirects is busy, the change feed's notice wakes
// them, a thread that ends is started again, and the service's stop ends it. The thread runs only
// while the database holds a webhook. Against a fresh PostgreSQL database in every pass.
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import postgres from 'postgres'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, type User } from '../helpers/api.js'
import { freshDatabase, type FreshDatabase } from '../helpers/pg.js'
import { startServer, type TestServer } from '../helpers/server.js'
import { sleep, until } from '../helpers/wait.js'

// The receiver is a process of its own: it must answer while this thread, the service's, is blocked.
const RECEIVER = `
import { createServer } from 'node:http'
const server = createServer((req, res) => {
  let body = ''
  req.on('data', (c) => (body += c))
  req.on('end', () => {
    const event = JSON.parse(body)
    console.log(JSON.stringify({ type: event.type, code: event.data.code, at: Date.now() }))
    res.end()
  })
})
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })))
`

interface Ctx {
  db: FreshDatabase
  srv: TestServer
  user: User
  receiver: ChildProcess
  received: Array<{ type: string; code: string; at: number }>
}

/** A suite on a fresh database whose delivery thread looks for work every `pollMs` besides its wakes. */
function threadSuite(name: string, pollMs: number) {
  const test = suite<Ctx>(name)
  test.before(async (ctx) => {
    ctx.db = await freshDatabase()
    ctx.srv = await startServer({ DATABASE_URL: ctx.db.url, WEBHOOK_ALLOW_HTTP: 'on', WEBHOOK_ALLOW_PRIVATE: 'on', WEBHOOK_POLL_MS: String(pollMs) })
    ctx.user = await newUser(ctx.srv.url)
    ctx.received = []
    ctx.receiver = spawn(process.execPath, ['--input-type=module', '-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] })
    const port = await new Promise<number>((resolve) => {
      createInterface({ input: ctx.receiver.stdout! }).on('line', (line) => {
        const m = JSON.parse(line)
        if (m.port !== undefined) resolve(m.port)
        else ctx.received.push(m)
      })
    })
    const hook = await call(ctx.srv.url, 'POST', '/api/v1/webhooks', { token: ctx.user.token, body: { url: `http://127.0.0.1:${port}/hook`, events: ['link.created'] } })
    assert.is(hook.status, 201, hook.text)
  })
  test.after(async (ctx) => {
    ctx.receiver?.kill()
    await ctx.srv?.close()
    await ctx.db?.drop()
  })
  return test
}

const deliveredAt = (ctx: Ctx, code: string) => ctx.received.find((r) => r.type === 'link.created' && r.code === code)?.at

const test = threadSuite('webhook deliveries on a thread of their own', 200)
test('a delivery is made while the event loop that answers redirects is blocked', async (ctx) => {
  await until(2_000, () => ctx.srv.service.webhooks.thread !== undefined) // the account has a webhook
  const link = await newLink(ctx.srv.url, ctx.user.token)
  // This thread is the service's: nothing on it runs for 3 s, not even the change feed passing on
  // the create's notice (the delivery thread's own poll finds the delivery).
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3_000)
  const unblocked = Date.now()
  await until(5_000, () => deliveredAt(ctx, link.code) !== undefined)
  assert.ok(deliveredAt(ctx, link.code)! < unblocked, `delivered ${deliveredAt(ctx, link.code)! - unblocked} ms after the block ended`)
})

test('a delivery thread that ends is started again, and delivers what comes after', async (ctx) => {
  const first = ctx.srv.service.webhooks.thread!
  await first.terminate()
  await until(5_000, () => ctx.srv.service.webhooks.thread !== undefined && ctx.srv.service.webhooks.thread !== first)
  assert.ok(ctx.srv.logs.some((l) => l.includes('webhook delivery thread ended; starting it again')))
  const link = await newLink(ctx.srv.url, ctx.user.token)
  await until(5_000, () => deliveredAt(ctx, link.code) !== undefined)
})

test("the service's stop ends the delivery thread", async (ctx) => {
  const thread = ctx.srv.service.webhooks.thread!
  const exited = new Promise<number>((resolve) => thread.once('exit', resolve))
  await ctx.srv.service.webhooks.stop()
  assert.is(await exited, 0, 'it ended by itself, its claims given back and its pool closed')
  assert.is(ctx.srv.service.webhooks.thread, undefined)
})

test.run()

const woken = threadSuite('webhook deliveries woken through the change feed', 600_000)
woken('a queued delivery is sent at once: the change feed passes its notice to the thread (its poll is 10 minutes)', async (ctx) => {
  const link = await newLink(ctx.srv.url, ctx.user.token)
  await until(2_000, () => deliveredAt(ctx, link.code) !== undefined)
})
woken.run()

// Its engine and pool cost memory (docs/decisions.md): a service nobody subscribes to does without.
const needed = suite<{ db: FreshDatabase; srv: TestServer; user: User }>('a delivery thread only while the database holds a webhook')
needed.before(async (ctx) => {
  ctx.db = await freshDatabase()
  const env = { WEBHOOK_ALLOW_HTTP: 'on', WEBHOOK_ALLOW_PRIVATE: 'on', WEBHOOK_POLL_MS: '100', WEBHOOK_THREAD_IDLE_MS: '300' }
  ctx.srv = await startServer({ DATABASE_URL: ctx.db.url, ...env })
  ctx.user = await newUser(ctx.srv.url)
})
needed.after(async (ctx) => {
  await ctx.srv?.close()
  await ctx.db?.drop()
})

/** A webhook that nothing answers (its deliveries fail and wait for their retries). */
const newHook = async (ctx: { srv: TestServer; user: User }, events: string[]) => {
  const res = await call(ctx.srv.url, 'POST', '/api/v1/webhooks', { token: ctx.user.token, body: { url: 'http://127.0.0.1:9/hook', events } })
  assert.is(res.status, 201, res.text)
  return res.body.id as string
}

needed('no thread while no account has a webhook; one starts when a webhook is made, and ends once none is left', async (ctx) => {
  await sleep(500) // five polls
  assert.is(ctx.srv.service.webhooks.thread, undefined)
  const id = await newHook(ctx, ['link.created'])
  await until(2_000, () => ctx.srv.service.webhooks.thread !== undefined)
  const thread = ctx.srv.service.webhooks.thread!
  const exited = new Promise<number>((resolve) => thread.once('exit', resolve))
  assert.is((await call(ctx.srv.url, 'DELETE', `/api/v1/webhooks/${id}`, { token: ctx.user.token })).status, 204)
  assert.is(await exited, 0, 'it ended by itself, not by terminate')
  assert.is(ctx.srv.service.webhooks.thread, undefined)
  assert.ok(ctx.srv.logs.some((l) => l.includes('no webhooks: the delivery thread stops')))
  assert.not.ok(ctx.srv.logs.some((l) => l.includes('starting it again')), 'an end it asked for is not restarted')
})

needed('an expiry that passes while no thread runs is not sent to a webhook made after it', async (ctx) => {
  assert.is(ctx.srv.service.webhooks.thread, undefined)
  const expiresAt = new Date(Date.now() + 600).toISOString()
  const link = await call(ctx.srv.url, 'POST', '/api/v1/links', { token: ctx.user.token, body: { url: 'https://example.com/soon', expires_at: expiresAt } })
  assert.is(link.status, 201, link.text)
  const sql = postgres(ctx.db.url, { max: 1, onnotice: () => {} })
  try {
    // The main thread's poll marks the expiry when it passes, with no one to tell.
    await until(3_000, async () => (await sql`select expiry_announced from links where code = ${link.body.code}`)[0]?.expiry_announced !== null)
    await newHook(ctx, ['link.expired'])
    await until(2_000, () => ctx.srv.service.webhooks.thread !== undefined)
    await sleep(500) // five of the thread's polls, each of which runs the link.expired job
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where event = 'link.expired'`
    assert.is(row?.n, 0)
  } finally {
    await sql.end({ timeout: 1 })
  }
})

needed.run()
