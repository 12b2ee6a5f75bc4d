// The `postgres` driver 3.4.9 counted a result's rows in one variable per connection, reset only
// when a statement completed (porsager/postgres #1119, #1181). A statement that failed after
// sending rows left the count standing, and the connection's next statement resolved with that
// many holes before its own rows: `const [row] = ...` found nothing (a valid session answered
// 401) and `new Map(rows.map(...))` threw where no caller caught it (a worker exited under
// test/http/db-kills.test.ts). scripts/patch-postgres.mjs resets it; these tests fail without it.
// Below them, another of its defects: a connection cut while it opens.
import postgres from 'postgres'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { ADMIN_URL, pgUnavailable } from '../helpers/pg.js'
import { Relay, terminatedByAdministrator } from '../helpers/relay.js'

const why = await pgUnavailable()
if (why !== undefined) {
  process.stdout.write(`driver-rows.test: not run: ${why}\n`)
} else {
  const test = suite<{ sql: postgres.Sql }>('driver: a statement after one that failed mid-rows')
  test.before((ctx) => {
    // One connection: the statement after the failed one runs on the same connection object.
    ctx.sql = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
  })
  test.after(async ({ sql }) => {
    await sql.end({ timeout: 1 })
  })

  const messageOf = (err: unknown) => (err as Error).message

  test('an error on a later row: the next statement resolves with its own rows and no holes', async ({ sql }) => {
    // Rows for i = 1..3 are sent before the fourth divides by zero.
    const failed = await sql`select i, 1 / (4 - i) as boom from generate_series(1, 10) i`.catch(messageOf)
    assert.is(failed, 'division by zero')
    const rows = await sql<{ x: number }[]>`select x from generate_series(1, 5) x`
    assert.equal([...rows].map((r) => r?.x), [1, 2, 3, 4, 5])
  })

  test('its connection terminated after some rows: the reconnected connection answers whole rows', async ({ sql }) => {
    // The backend ends itself on the third row, after the first ones were sent.
    const failed = await sql`
      select i, case when i = 3 then pg_terminate_backend(pg_backend_pid()) end as ended
      from generate_series(1, 10) i`.catch(messageOf)
    assert.type(failed, 'string', 'the statement failed with its connection')
    // A statement sent while the connection was still closing fails with it: the first one
    // answered on the new connection is the one checked.
    let rows: { x: number }[] | undefined
    for (let attempt = 0; rows === undefined && attempt < 5; attempt++) rows = await sql<{ x: number }[]>`select x from generate_series(1, 3) x`.catch(() => undefined)
    assert.equal([...rows!].map((r) => r?.x), [1, 2, 3])
  })

  test.run()

  // A new connection first asks for the array types (fetch_types). Cut then, the driver kept
  // that statement and the server's FATAL error across its reconnect: the new connection's first
  // ReadyForQuery failed the opening statement with the old error and opened without the array
  // types, so an array parameter went out as text (porsager/postgres #1223; CI saw "malformed
  // array literal" from db-kills.test.ts). scripts/patch-postgres.mjs forgets them at the close.
  const opening = suite<{ relay: Relay; sql: postgres.Sql }>('driver: a connection cut while it opens')
  opening.before(async (ctx) => {
    const { relay, url } = await Relay.to(ADMIN_URL)
    ctx.relay = relay
    ctx.sql = postgres(url, { max: 1, onnotice: () => {} })
  })
  opening.after(async ({ relay, sql }) => {
    await sql.end({ timeout: 1 })
    await relay.cut()
  })

  opening('terminated during the array-type query: the opening statement runs on the new connection, and arrays are sent as arrays', async ({ relay, sql }) => {
    // The array-type query's answer names its column typarray; the client gets 57P01 instead.
    relay.cutAtAnswer('typarray', terminatedByAdministrator())
    const [first] = await sql<{ one: number }[]>`select 1 as one`
    assert.is(first?.one, 1, 'not failed with the closed connection\'s error')
    const [row] = await sql<{ codes: string[] }[]>`select ${['a', 'b,c']}::text[] as codes`
    assert.equal(row?.codes, ['a', 'b,c'])
  })

  opening.run()
}
