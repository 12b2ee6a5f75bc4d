// GET /healthz says 503 while link writes fail, whatever else succeeds (a full disk let
// registrations through while every link create failed). A trigger stands in for the full disk:
// it fails link inserts with SQLSTATE 53100 (disk_full), as PostgreSQL would.
import * as assert from 'uvu/assert'
import { call, newUser } from '../helpers/api.js'
import { serverSuite } from '../helpers/server.js'

const test = serverSuite('health and the writes that matter')

test('/healthz is 503 while link creates fail, though registrations succeed; 200 once they work again', async ({ srv }) => {
  const sql = srv.service.db.sql
  const user = await newUser(srv.url)
  await sql`create function fail_link_insert() returns trigger language plpgsql as $$
    begin raise exception 'could not extend file: No space left on device' using errcode = '53100'; end $$`
  await sql`create trigger fail_link_insert before insert on links for each row execute function fail_link_insert()`
  try {
    const create = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/full' } })
    assert.is(create.status, 503)
    await newUser(srv.url) // a registration succeeds: it must not speak for link writes
    const health = await call(srv.url, 'GET', '/healthz')
    assert.is(health.status, 503, JSON.stringify(health.body))
    assert.is(health.body.writes, 'failing')
    assert.is(health.body.database, 'ok')
  } finally {
    await sql`drop trigger fail_link_insert on links`
    await sql`drop function fail_link_insert()`
  }
  assert.is((await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/ok' } })).status, 201)
  assert.is((await call(srv.url, 'GET', '/healthz')).status, 200)
})

test.run()
