// Fresh PostgreSQL databases for tests that need one whatever the pass (export/import, migrate,
// backups): created through TEST_ADMIN_URL (by default the local server's `postgres` database)
// and dropped afterwards. The embedded pass of `npm test` uses them too, so those tests run in both.
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'

export const ADMIN_URL = process.env.TEST_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** Why PostgreSQL cannot be used here, or undefined when it can. */
export async function pgUnavailable(): Promise<string | undefined> {
  const admin = postgres(ADMIN_URL, { max: 1, connect_timeout: 3, onnotice: () => {} })
  try {
    await admin`select 1`
    return undefined
  } catch (err) {
    return `no PostgreSQL at TEST_ADMIN_URL (${new URL(ADMIN_URL).host}): ${(err as Error).message}`
  } finally {
    await admin.end({ timeout: 1 })
  }
}

export interface FreshDatabase {
  name: string
  url: string
  drop(): Promise<void>
}

export async function freshDatabase(): Promise<FreshDatabase> {
  const name = `ls_${randomBytes(6).toString('hex')}`
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
  try {
    await admin`create database ${admin(name)}`
  } finally {
    await admin.end({ timeout: 1 })
  }
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return {
    name,
    url: url.toString(),
    async drop() {
      const sql = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
      try {
        await sql`drop database if exists ${sql(name)} with (force)`
      } finally {
        await sql.end({ timeout: 1 })
      }
    },
  }
}
