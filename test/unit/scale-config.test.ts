// The configuration past one machine: read replicas, a direct LISTEN connection, prepared statements.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadConfig } from '../../src/config.js'

const DB = 'postgres://u@primary/db'

test('defaults: no replicas, LISTEN on DATABASE_URL, prepared statements on', () => {
  const c = loadConfig({ DATABASE_URL: DB })
  assert.equal([c.databaseReadUrls, c.databaseListenUrl, c.databasePrepare], [[], undefined, true])
})

test('DATABASE_READ_URL: URLs split at the commas that start one, so a multi-host URL stays whole', () => {
  const c = loadConfig({ DATABASE_URL: DB, DATABASE_READ_URL: ' postgres://u@r1/db , postgresql://u@r2:5433,r3:5434/db?sslmode=require,postgres://u@r4/db ' })
  assert.equal(c.databaseReadUrls, ['postgres://u@r1/db', 'postgresql://u@r2:5433,r3:5434/db?sslmode=require', 'postgres://u@r4/db'])
})

test('DATABASE_LISTEN_URL and DATABASE_PREPARE=off are taken as given', () => {
  const c = loadConfig({ DATABASE_URL: DB, DATABASE_LISTEN_URL: 'postgres://u@direct/db', DATABASE_PREPARE: 'off' })
  assert.equal([c.databaseListenUrl, c.databasePrepare], ['postgres://u@direct/db', false])
})

test('refused: replicas or a LISTEN URL without DATABASE_URL, a URL that is not postgres://, DATABASE_PREPARE other than on/off', () => {
  for (const [env, message] of [
    [{ DATABASE_READ_URL: 'postgres://u@r1/db' }, /need DATABASE_URL/],
    [{ DATABASE_LISTEN_URL: 'postgres://u@direct/db' }, /need DATABASE_URL/],
    [{ DATABASE_URL: DB, DATABASE_READ_URL: 'mysql://u@r1/db' }, /DATABASE_READ_URL must hold postgres:\/\/ URLs: one or more, comma-separated/],
    [{ DATABASE_URL: DB, DATABASE_LISTEN_URL: 'direct:5432' }, /DATABASE_LISTEN_URL must hold postgres:\/\/ URLs: one/],
    [{ DATABASE_URL: DB, DATABASE_PREPARE: 'no' }, /DATABASE_PREPARE must be one of on, off/],
  ] as Array<[Record<string, string>, RegExp]>) {
    assert.throws(() => loadConfig(env), message, JSON.stringify(env))
  }
})

test.run()
