// Account changes racing logins (contract §3). A login checks the password for a while (the KDF);
// what it read at the start may no longer hold when it is done. These tests start the racing
// requests so that the windows overlap; each asserts what must hold whichever way they interleave.
import { createHash } from 'node:crypto'
import postgres from 'postgres'
import * as assert from 'uvu/assert'
import { call, newUser, type Res, type User } from '../helpers/api.js'
import { serverSuite, type TestServer } from '../helpers/server.js'
import { sleep } from '../helpers/wait.js'

// A costlier KDF than the suite's default widens the window a login spends checking.
const test = serverSuite('account changes racing logins', { ARGON2_MEMORY_KIB: '4096' })

const loginAs = (srv: TestServer, user: User, password = user.password) =>
  call(srv.url, 'POST', '/api/v1/auth/login', { body: { username: user.username, password } })
const me = async (srv: TestServer, token: string) => (await call(srv.url, 'GET', '/api/v1/users/me', { token })).status

/** Every login that succeeded got a token that no longer works; none failed otherwise than 401. */
async function assertNoneOutlived(srv: TestServer, logins: Res[], what: string): Promise<void> {
  for (const res of logins) {
    assert.ok(res.status === 200 || res.status === 401, `${what}: ${res.status} ${res.text}`)
    if (res.status === 401) assert.is(res.body.code, 'INVALID_CREDENTIALS')
    else assert.is(await me(srv, res.body.token), 401, `${what}: a session from a login that raced it still works`)
  }
}

// contract §3: a password change revokes every other session of the user
test('a login that overlaps a password change leaves no session besides the changer’s', async ({ srv }) => {
  const user = await newUser(srv.url)
  const started = performance.now()
  assert.is((await loginAs(srv, user)).status, 200)
  const hashMs = performance.now() - started // about one KDF run
  // The change checks the current password, then hashes the new one, then commits. Logins sent
  // all along that span read the old hash at different moments: some before the change began
  // hashing the new password, some after, some after it committed.
  const change = call(srv.url, 'PATCH', '/api/v1/users/me', {
    token: user.token,
    body: { password: 'brand new password', current_password: user.password },
  })
  const pending: Array<Promise<Res>> = []
  for (let i = 0; i < 12; i++) {
    pending.push(loginAs(srv, user))
    await sleep(hashMs / 4)
  }
  const logins = await Promise.all(pending)
  const changed = await change
  assert.is(changed.status, 200, changed.text)
  await assertNoneOutlived(srv, logins, 'password change')
  assert.is(await me(srv, user.token), 200, 'the session that made the change stays')
  assert.is((await loginAs(srv, user, 'brand new password')).status, 200)
})

// contract §3: DELETE /users/me takes the sessions with it; contract §2: never a 500 for a race
test('a login that overlaps deleting the account answers 401, never 500, and leaves no session', async ({ srv }) => {
  const user = await newUser(srv.url)
  const logins = Promise.all(Array.from({ length: 4 }, () => loginAs(srv, user)))
  await sleep(5) // the logins have found the account and are checking the password
  assert.is((await call(srv.url, 'DELETE', '/api/v1/users/me', { token: user.token })).status, 204)
  await assertNoneOutlived(srv, await logins, 'account deletion')
})

// contract §3: PATCH password requires the current password; two changes cannot both have it
test('of two password changes racing with the same current password, exactly one wins', async ({ srv }) => {
  const user = await newUser(srv.url)
  const other = (await loginAs(srv, user)).body.token as string
  const [a, b] = await Promise.all(
    [
      [user.token, 'first new password'],
      [other, 'second new password'],
    ].map(([token, next]) => call(srv.url, 'PATCH', '/api/v1/users/me', { token, body: { password: next, current_password: user.password } })),
  )
  const statuses = [a!.status, b!.status].sort()
  assert.ok(statuses[0] === 200 && (statuses[1] === 401 || statuses[1] === 403), `${a!.status} ${a!.text} / ${b!.status} ${b!.text}`)
  const winner = a!.status === 200 ? 'first new password' : 'second new password'
  const loser = a!.status === 200 ? 'second new password' : 'first new password'
  assert.is((await loginAs(srv, user, winner)).status, 200)
  assert.is((await loginAs(srv, user, loser)).status, 401)
  assert.is((await loginAs(srv, user, user.password)).status, 401)
})

// contract §3: a password change revokes every other session, and a revoked session is refused.
// The interleaving is forced: a transaction of the test's own holds the user's row and revokes
// the session while the PATCH waits for that row. Needs a real PostgreSQL (a second connection).
if (process.env.DATABASE_URL !== undefined) {
  test('a profile change waiting behind the change that revoked its session answers 401', async ({ srv }) => {
    const user = await newUser(srv.url)
    const other = (await loginAs(srv, user)).body.token as string
    const db = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
    try {
      let patch: Promise<Res> | undefined
      await db.begin(async (tx) => {
        await tx`select 1 from users where id = ${user.id} for update`
        await tx`delete from sessions where user_id = ${user.id} and token_hash = ${createHash('sha256').update(other).digest()}`
        patch = call(srv.url, 'PATCH', '/api/v1/users/me', { token: other, body: { display_name: 'Too Late' } })
        await sleep(300) // the PATCH has authenticated and now waits for the row
      })
      const res = await patch!
      assert.is(res.status, 401, res.text)
      assert.is(res.body.code, 'UNAUTHORIZED')
      assert.is.not((await call(srv.url, 'GET', '/api/v1/users/me', { token: user.token })).body.display_name, 'Too Late')
    } finally {
      await db.end()
    }
  })
}

test.run()
