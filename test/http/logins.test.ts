// Logins that hold up: argon2id hashes and the upgrade of old ones, bursts that get no
// 503, fairness under floods, the failed-login backoff, and the limits on password changes and
// deletions. Real figures at the default cost come from scripts/login-floods.mjs; these tests use
// a cheaper cost (ARGON2_MEMORY_KIB) so they stay fast, but one dear enough for a line to form.
import { setMaxListeners } from 'node:events'
import * as assert from 'uvu/assert'
import { call, login, newUser, randomIp, uniqueName, type Res, type User } from '../helpers/api.js'
import { legacyScryptHash } from '../helpers/passwords.js'
import { serverSuite, type TestServer } from '../helpers/server.js'
import { Passwords } from '../../src/passwords/passwords.js'
import { sleep } from '../helpers/wait.js'

const PASSWORD = 'correct horse battery'
const postLogin = (srv: TestServer, username: string, password: string, ip = randomIp(), signal?: AbortSignal) =>
  call(srv.url, 'POST', '/api/v1/auth/login', { body: { username, password }, ip, signal })
const timed = async <T>(p: () => Promise<T>): Promise<{ result: T; ms: number }> => {
  const t = performance.now()
  const result = await p()
  return { result, ms: performance.now() - t }
}

async function storedHash(srv: TestServer, username: string): Promise<string> {
  const [row] = await srv.service.db.sql<{ password_hash: string }[]>`select password_hash from users where username = ${username}`
  return row!.password_hash
}

/** A user written straight into the table with this stored hash, as an earlier release left it. */
async function seedUser(srv: TestServer, hash: string): Promise<string> {
  const username = uniqueName('old')
  await srv.service.db.sql`insert into users (username, display_name, password_hash) values (${username}, 'Old User', ${hash})`
  return username
}

function tally(results: Res[]): Record<number, number> {
  const out: Record<number, number> = {}
  for (const r of results) out[r.status] = (out[r.status] ?? 0) + 1
  return out
}

// ---------------------------------------------------------------------------------------------
const storage = serverSuite('password storage and upgrade')

// A fresh registration stores a $argon2id$ hash
storage('registration stores an argon2id PHC string at the configured cost', async ({ srv }) => {
  const user = await newUser(srv.url, PASSWORD)
  const { memoryKiB, iterations } = srv.service.deps.config.argon2
  assert.match(await storedHash(srv, user.username), new RegExp(`^\\$argon2id\\$v=19\\$m=${memoryKiB},t=${iterations},p=1\\$`))
})

// A user registered by the previous release logs in and is upgraded
storage('a user with a scrypt hash of the previous release logs in, and the hash becomes argon2id', async ({ srv }) => {
  const old = legacyScryptHash(PASSWORD, 12)
  const username = await seedUser(srv, old)
  const wrong = await postLogin(srv, username, 'wrong password')
  assert.is(wrong.status, 401)
  assert.is(wrong.body.code, 'INVALID_CREDENTIALS')
  assert.is(await storedHash(srv, username), old, 'a failed login changes nothing')
  const res = await postLogin(srv, username, PASSWORD)
  assert.is(res.status, 200, res.text)
  const upgraded = await storedHash(srv, username)
  assert.match(upgraded, /^\$argon2id\$v=19\$/)
  assert.equal(await srv.service.deps.passwords.verify(PASSWORD, upgraded), { ok: true, rehash: false })
  // The session of the upgrading login works, and so does the next login.
  assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token: res.body.token })).status, 200)
  assert.is((await postLogin(srv, username, PASSWORD)).status, 200)
  assert.is(await storedHash(srv, username), upgraded, 'upgraded once')
})

// A login with argon2id parameters weaker than the configured ones rehashes it too
storage('argon2id with weaker parameters is rehashed at the configured cost on login', async ({ srv }) => {
  const weak = new Passwords({ memoryKiB: 8, iterations: 1 }, 1)
  const username = await seedUser(srv, await weak.hash(PASSWORD))
  await weak.close()
  assert.is((await postLogin(srv, username, PASSWORD)).status, 200)
  const { memoryKiB, iterations } = srv.service.deps.config.argon2
  assert.match(await storedHash(srv, username), new RegExp(`^\\$argon2id\\$v=19\\$m=${memoryKiB},t=${iterations},p=1\\$`))
})

// ---------------------------------------------------------------------------------------------
// About 20-40 ms a hash: a burst of 60 makes a line of a second or two.
const burst = serverSuite('bursts of logins', { ARGON2_MEMORY_KIB: '4096', ARGON2_ITERATIONS: '1' })

// 60 simultaneous logins from 60 addresses, half of them unknown usernames,
// get only 200 and 401, no 503
burst('60 logins at once from 60 addresses, half unknown: 30 × 200 and 30 × 401, nothing else', async ({ srv }) => {
  const hash = await srv.service.deps.passwords.hash(PASSWORD)
  const known: string[] = []
  for (let i = 0; i < 30; i++) known.push(await seedUser(srv, hash))
  const results = await Promise.all(
    Array.from({ length: 60 }, (_, i) => postLogin(srv, i % 2 === 0 ? known[i / 2]! : uniqueName('nobody'), PASSWORD)),
  )
  assert.equal(tally(results), { 200: 30, 401: 30 })
})

// Correct logins are never limited beyond the spec's per-address limit: 50 devices of one
// user logging in at once from 50 addresses all get in
burst('50 devices of one user log in at once from 50 addresses: all 200', async ({ srv }) => {
  const user = await newUser(srv.url, PASSWORD)
  const results = await Promise.all(Array.from({ length: 50 }, () => postLogin(srv, user.username, PASSWORD)))
  assert.equal(tally(results), { 200: 50 })
})

// A client that hangs up leaves the queue
burst('a login whose client hangs up leaves the line at once', async ({ srv }) => {
  const user = await newUser(srv.url, PASSWORD)
  const pool = srv.service.deps.passwords.pool
  const body = JSON.stringify({ username: user.username, password: PASSWORD })
  const controllers = Array.from({ length: 40 }, () => new AbortController())
  const requests = controllers.map((c) =>
    fetch(`${srv.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': randomIp() },
      body,
      signal: c.signal,
    }).then(
      async (res) => (await res.text(), res.status),
      () => 'aborted',
    ),
  )
  for (const deadline = Date.now() + 5_000; pool.waiting < 30; await sleep(2)) {
    if (Date.now() > deadline) throw new Error(`the line did not form (${pool.waiting} waiting)`)
  }
  const before = pool.waiting
  for (const c of controllers.slice(20)) c.abort()
  for (const deadline = Date.now() + 1_000; pool.waiting > before - 20 + 2; await sleep(2)) {
    assert.ok(Date.now() < deadline, `still ${pool.waiting} waiting of ${before} after 20 hung up`)
  }
  const statuses = await Promise.all(requests)
  assert.equal(statuses.slice(0, 20), Array(20).fill(200))
})

// ---------------------------------------------------------------------------------------------
// A dearer hash (tens of milliseconds): a flood now asks for more than the threads can do.
const floods = serverSuite('floods and fairness', { ARGON2_MEMORY_KIB: '8192', ARGON2_ITERATIONS: '1' })

/**
 * Runs `attack` for `ms` while a probe runs every 500 ms. Returns the probes' answers and those of
 * the attack that came by the end; the attack's requests still waiting then (held-back failures,
 * long lines) are abandoned.
 */
async function during(ms: number, attack: (until: number, signal: AbortSignal, answers: Res[]) => Promise<void>, probe: () => Promise<Res>) {
  const until = performance.now() + ms
  const abandon = new AbortController()
  setMaxListeners(0, abandon.signal) // one listener per request of the flood
  const attacks: Res[] = []
  const attacking = attack(until, abandon.signal, attacks)
  const probes: Array<{ result: Res; ms: number }> = []
  await sleep(300)
  while (performance.now() < until) {
    probes.push(await timed(probe))
    await sleep(500)
  }
  abandon.abort()
  await attacking
  return { attacks: [...attacks], probes }
}

/** Sends one request of a flood; its answer is noted unless the flood was abandoned first. */
function floodRequest(request: Promise<Res>, answers: Res[]): Promise<void> {
  return request.then(
    (res) => void answers.push(res),
    (err: unknown) => {
      if ((err as Error).name !== 'AbortError') throw err
    },
  )
}

// During a flood of wrong-password PATCH /api/v1/users/me from one account,
// a login from a third address answers 200 within 5 s, every time
floods('a flood of wrong-password PATCH /users/me from one account: a bystander logs in within 5 s every time', async ({ srv }) => {
  const attacker = await newUser(srv.url, PASSWORD)
  const bystander = await newUser(srv.url, PASSWORD)
  const ip = randomIp()
  const { attacks, probes } = await during(
    5_000,
    async (until, signal, answers) => {
      const body = { password: 'new password 1', current_password: 'wrong password' }
      await Promise.all(
        Array.from({ length: 70 }, async () => {
          while (performance.now() < until && !signal.aborted) {
            await floodRequest(call(srv.url, 'PATCH', '/api/v1/users/me', { token: attacker.token, ip, body, signal }), answers)
          }
        }),
      )
    },
    () => postLogin(srv, bystander.username, PASSWORD),
  )
  const t = tally(attacks)
  assert.is(t[403], 5, 'five checks, then the account is limited')
  assert.ok(t[429]! > 100, JSON.stringify(t))
  assert.is(t[403]! + t[429]!, attacks.length, JSON.stringify(t))
  assert.ok(probes.length >= 2, `${probes.length} probes: ${probes.map((p) => p.ms.toFixed(0)).join(', ')} ms`)
  for (const p of probes) {
    assert.is(p.result.status, 200)
    assert.ok(p.ms < 5_000, `a bystander's login took ${p.ms.toFixed(0)} ms`)
  }
})

// During a flood of wrong-password logins from 25 addresses, each within its
// limit, a login from a third address answers 200 within 5 s, every time; and the owner of the
// attacked account, from an address of its own, is not locked out (its first try may wait behind
// the flood's first request from each address: they all came first, as fresh as the owner)
floods('wrong-password logins at one account from 25 addresses at 5/s each: a bystander gets in within 5 s, and so does the owner', async ({ srv }) => {
  const victim = await newUser(srv.url, PASSWORD)
  const bystander = await newUser(srv.url, PASSWORD)
  const attackers = Array.from({ length: 25 }, () => randomIp())
  const owner: Array<Promise<{ result: Res; ms: number }>> = []
  const { attacks, probes } = await during(
    4_000,
    async (until, signal, answers) => {
      // Open loop: each address sends every 200 ms, whatever the answers do.
      const sent: Array<Promise<void>> = []
      while (performance.now() < until) {
        for (const ip of attackers) sent.push(floodRequest(postLogin(srv, victim.username, `guess ${sent.length}`, ip, signal), answers))
        await sleep(200)
      }
      await Promise.all(sent)
    },
    () => {
      owner.push(timed(() => postLogin(srv, victim.username, PASSWORD)))
      return postLogin(srv, bystander.username, PASSWORD)
    },
  )
  const t = tally(attacks)
  assert.ok(attacks.length > 0)
  assert.ok(Object.keys(t).every((s) => s === '401' || s === '503' || s === '429'), JSON.stringify(t))
  assert.ok(probes.length >= 2)
  for (const p of probes) {
    assert.is(p.result.status, 200, p.result.text)
    assert.ok(p.ms < 5_000, `a bystander's login took ${p.ms.toFixed(0)} ms`)
  }
  for (const [i, o] of (await Promise.all(owner)).entries()) {
    assert.is(o.result.status, 200, o.result.text)
    if (i > 0) assert.ok(o.ms < 5_000, `the owner's login took ${o.ms.toFixed(0)} ms`)
  }
})

// ---------------------------------------------------------------------------------------------
const backoff = serverSuite('failed-login backoff')

// Repeated failed logins for one account slow down (0.5 s from the sixth, doubling),
// while a correct login is never held back
backoff('from the sixth failure in a row the answer is held back, doubling; the right password is not', async ({ srv }) => {
  const user = await newUser(srv.url, PASSWORD)
  for (let i = 0; i < 5; i++) {
    const { result, ms } = await timed(() => postLogin(srv, user.username, 'wrong password'))
    assert.is(result.status, 401)
    assert.ok(ms < 450, `failure ${i + 1} took ${ms.toFixed(0)} ms`)
  }
  const failures = [6, 7, 8].map(() => timed(() => postLogin(srv, user.username, 'wrong password')))
  await sleep(50)
  const correct = await timed(() => postLogin(srv, user.username, PASSWORD))
  assert.is(correct.result.status, 200)
  const held = await Promise.all(failures)
  for (const f of held) assert.is(f.result.status, 401)
  const slowest = Math.max(...held.map((f) => f.ms))
  assert.ok(slowest >= 2_000, `the eighth failure was held ${slowest.toFixed(0)} ms`)
  assert.ok(correct.ms < slowest, `the correct login (${correct.ms.toFixed(0)} ms) waited for no failure`)
})

// spec §5.6: the backoff is the same for an unknown username, so it reveals nothing
backoff('an unknown username backs off the same way', async ({ srv }) => {
  const nobody = uniqueName('nobody')
  for (let i = 0; i < 5; i++) assert.is((await postLogin(srv, nobody, 'wrong password')).status, 401)
  const { result, ms } = await timed(() => postLogin(srv, nobody, 'wrong password'))
  assert.is(result.status, 401)
  assert.is(result.body.code, 'INVALID_CREDENTIALS')
  assert.ok(ms >= 500, `the sixth failure was held ${ms.toFixed(0)} ms`)
})

// ---------------------------------------------------------------------------------------------
const changes = serverSuite('limits on password changes and deletions')

// Password change gets a per-account limit, cluster-wide (5, then one a minute)
changes('five password checks per account, then 429 with Retry-After; a display name alone is not limited', async ({ srv }) => {
  const user = await newUser(srv.url, PASSWORD)
  const patch = (body: unknown) => call(srv.url, 'PATCH', '/api/v1/users/me', { token: user.token, body })
  for (let i = 0; i < 5; i++) {
    const res = await patch({ password: 'new password 1', current_password: `wrong ${i}` })
    assert.is(res.status, 403, res.text)
  }
  const limited = await patch({ password: 'new password 1', current_password: PASSWORD })
  assert.is(limited.status, 429)
  assert.is(limited.body.code, 'RATE_LIMIT_EXCEEDED')
  assert.ok(Number(limited.headers.get('retry-after')) >= 1 && Number(limited.headers.get('retry-after')) <= 60)
  assert.ok((await login(srv.url, user.username, PASSWORD)).length > 0, 'the password did not change')
  const renamed = await patch({ display_name: 'Still Free' })
  assert.is(renamed.status, 200)
  assert.is(renamed.body.display_name, 'Still Free')
})

// ... and a per-address limit (20, then one every 6 s), for deletions too
changes('twenty password changes or deletions from one address, then 429', async ({ srv }) => {
  const ip = randomIp()
  const users: User[] = []
  for (let i = 0; i < 21; i++) users.push(await newUser(srv.url, PASSWORD))
  for (const [i, user] of users.slice(0, 20).entries()) {
    const res =
      i % 2 === 0
        ? await call(srv.url, 'DELETE', '/api/v1/users/me', { token: user.token, ip })
        : await call(srv.url, 'PATCH', '/api/v1/users/me', { token: user.token, ip, body: { password: 'new password 1', current_password: PASSWORD } })
    assert.ok(res.status === 204 || res.status === 200, `${i}: ${res.status}`)
  }
  const limited = await call(srv.url, 'DELETE', '/api/v1/users/me', { token: users[20]!.token, ip })
  assert.is(limited.status, 429)
  assert.is(limited.body.code, 'RATE_LIMIT_EXCEEDED')
  assert.ok(Number(limited.headers.get('retry-after')) >= 1)
  assert.is((await call(srv.url, 'GET', '/api/v1/users/me', { token: users[20]!.token })).status, 200, 'not deleted')
  assert.is((await call(srv.url, 'DELETE', '/api/v1/users/me', { token: users[20]!.token })).status, 204, 'from another address')
})

storage.run()
burst.run()
floods.run()
backoff.run()
changes.run()
