// Applies the numbered migrations in sql/ (0001_name.sql, ...) once each, in order, in one
// transaction under an advisory lock, so that several nodes may start at the same time. A file's
// number is its version. Numbers may skip (branches developed side by side reserve theirs), but a
// pending migration numbered below one already applied is refused: it would run out of order.
import { existsSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Sql } from './types.js'

/** sql/ beside the build: dist/db/migrate.js → ../../sql; build/src/db/migrate.js (the test build) → ../../../sql */
export const MIGRATIONS_DIR = [new URL('../../sql/', import.meta.url), new URL('../../../sql/', import.meta.url)]
  .map((u) => fileURLToPath(u))
  .find((dir) => existsSync(join(dir, '0001_init.sql')))!

const MIGRATION_LOCK = 7_245_001 // arbitrary, fixed: every node must use the same key
const FILE = /^(\d{4})_[a-z0-9_]+\.sql$/

export async function migrate(sql: Sql, dir: string): Promise<number[]> {
  const files = (await readdir(dir)).filter((f) => FILE.test(f)).sort()
  const version = (file: string) => Number(file.slice(0, 4))
  files.forEach((file, i) => {
    if (version(file) === 0 || (i > 0 && version(file) === version(files[i - 1]!))) {
      throw new Error(`migrations must be numbered from 0001, each number once: ${file}`)
    }
  })
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`
    await tx`create table if not exists schema_migrations (
      version integer primary key, name text not null, applied_at timestamptz not null default now())`
    const done = new Set((await tx<{ version: number }[]>`select version from schema_migrations`).map((r) => r.version))
    const latest = Math.max(0, ...done)
    const applied: number[] = []
    for (const file of files) {
      const v = version(file)
      if (done.has(v)) continue
      if (v < latest) throw new Error(`migration ${file} is older than one already applied (${latest}): it would run out of order`)
      await tx.file(join(dir, file))
      await tx`insert into schema_migrations (version, name) values (${v}, ${file})`
      applied.push(v)
    }
    return applied
  })
}
