// A drain that owes nothing, under the load that found its gaps: 24 keep-alive clients
// alternating link creates and redirects, the stop mid-way. Every request either gets one whole
// answer, or its connection is closed (a FIN) before any byte of an answer; never a reset. Every
// link that exists afterwards was answered 201: no write commits without its answer.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { newLink, newUser, randomIp } from '../helpers/api.js'
import { header, KeepAlive, requestHead, type Outcome } from '../helpers/raw.js'
import { startServer } from '../helpers/server.js'
import { sleep } from '../helpers/wait.js'

const CLIENTS = 24
const test = suite('drain under keep-alive load')

test('a stop under keep-alive load resets nothing, and every link that exists was answered 201', async () => {
  const srv = await startServer({ SHUTDOWN_TIMEOUT_MS: '5000' })
  const dataEnv: Record<string, string> = srv.service.db.embedded ? { DATA_DIR: srv.service.deps.config.dataDir } : {}
  const users = await Promise.all(Array.from({ length: 4 }, () => newUser(srv.url)))
  const { code } = await newLink(srv.url, users[0]!.token)
  const marker = `drain${Date.now().toString(36)}`
  const created = new Set<string>()
  const outcomes: Array<{ outcome: Outcome; afterStop: boolean }> = []
  let stopAt = Infinity
  const client = async (i: number) => {
    const conn = await KeepAlive.open(srv.url).catch(() => undefined)
    if (conn === undefined) return
    const user = users[i % users.length]!
    for (let n = 0; !conn.ended && n < 400; n++) {
      const sentAt = performance.now()
      let outcome: Outcome
      if (n % 2 === 0) {
        const url = `https://example.com/${marker}/${i}/${n}`
        const body = JSON.stringify({ url })
        // Head and body apart: some requests are half read when the stop comes.
        outcome = await conn.send(
          [requestHead(['POST /api/v1/links HTTP/1.1', 'Host: x', `Authorization: Bearer ${user.token}`, 'Content-Type: application/json', `Content-Length: ${body.length}`, `X-Forwarded-For: ${randomIp()}`]), body],
          1,
        )
        if (outcome.kind === 'answered' && outcome.status === 201) created.add(url)
      } else {
        outcome = await conn.send([requestHead([`GET /r/${code} HTTP/1.1`, 'Host: x'])])
      }
      outcomes.push({ outcome, afterStop: sentAt > stopAt })
      if (outcome.kind !== 'answered' || /close/i.test(header(outcome.head, 'connection') ?? '')) break
    }
    conn.close()
  }
  const load = Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)))
  await sleep(400)
  stopAt = performance.now()
  await srv.service.close()
  await load

  const broken = outcomes.filter((o) => o.outcome.kind === 'broken')
  assert.equal(broken, [], 'no reset, no answer cut short')
  const answered = outcomes.filter((o) => o.outcome.kind === 'answered')
  assert.ok(answered.length > CLIENTS, `load ran: ${answered.length} answers`)
  for (const { outcome, afterStop } of answered) {
    if (outcome.kind !== 'answered') continue
    assert.ok([201, 302, 409, 429].includes(outcome.status), `status ${outcome.status}: ${outcome.body}`)
    if (afterStop) assert.match(header(outcome.head, 'connection') ?? '', /close/i, 'an answer after the stop closes its connection')
  }

  // What the database holds now: every link of this run was answered 201.
  const after = await startServer(dataEnv)
  try {
    const rows = await after.service.db.sql<{ url: string }[]>`select url from links where url like ${`https://example.com/${marker}/%`}`
    const unanswered = rows.map((r) => r.url).filter((url) => !created.has(url))
    assert.equal(unanswered, [], 'no link was created without its 201')
    assert.is(rows.length, created.size)
  } finally {
    await after.close()
  }
})

test.run()
