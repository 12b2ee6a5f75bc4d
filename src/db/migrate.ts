// Applies the numbered migrations in sql/ (0001_name.sql, ...) once each, in order, in one
// transaction under an advisory lock, so that several nodes may start at the same time.
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Sql } from './index.js'

const MIGRATION_LOCK = 7_245_001 // arbitrary, fixed: every node must use the same key
const FILE = /^(\d{4})_[a-z0-9_]+\.sql$/

export async function migrate(sql: Sql, dir: string): Promise<number[]> {
  const files = (await readdir(dir)).filter((f) => FILE.test(f)).sort()
  files.forEach((file, i) => {
    if (Number(file.slice(0, 4)) !== i + 1) throw new Error(`migrations must be numbered 0001, 0002, ... without gaps: ${file}`)
  })
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`
    await tx`create table if not exists schema_migrations (
      version integer primary key, name text not null, applied_at timestamptz not null default now())`
    const done = new Set((await tx<{ version: number }[]>`select version from schema_migrations`).map((r) => r.version))
    const applied: number[] = []
    for (const [i, file] of files.entries()) {
      if (done.has(i + 1)) continue
      await tx.file(join(dir, file))
      await tx`insert into schema_migrations (version, name) values (${i + 1}, ${file})`
      applied.push(i + 1)
    }
    return applied
  })
}
