// The move from per-visitor hashes to sketches (sql/0010): the exact unique counts of the days
// already recorded are kept, the hashes are gone, and the stats read them back.
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js'
import type { Sql } from '../../src/db/types.js'
import { readStats } from '../../src/stats/queries.js'
import { freshDatabase, pgUnavailable } from '../helpers/pg.js'

const why = await pgUnavailable()
if (why !== undefined) {
  process.stdout.write(`sketch-migration.test: not run: ${why}\n`)
} else {
  test('0010 keeps the unique counts of recorded days: hashes are counted into uniques, then dropped', async () => {
    const db = await freshDatabase()
    const before = mkdtempSync(join(tmpdir(), 'ls-migrations-'))
    const sql = postgres(db.url, { max: 1, onnotice: () => {} }) as unknown as Sql
    try {
      for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => f < '0010')) copyFileSync(join(MIGRATIONS_DIR, f), join(before, f))
      await migrate(sql, before)
      await sql`insert into users (id, username, display_name, password_hash) values ('00000000-0000-4000-8000-000000000001', 'olduser', 'Old', 'x')`
      await sql`insert into links (code, user_id, url, location) values ('OLDCODE1', '00000000-0000-4000-8000-000000000001', 'https://example.com/', 'https://example.com/')`
      await sql`insert into visit_days (code, day, humans, bots, uniques) values ('OLDCODE1', '2026-01-01', 9, 0, 4), ('OLDCODE1', '2026-01-02', 5, 0, null)`
      await sql`insert into visit_hashes (day, code, hash) values ('2026-01-02', 'OLDCODE1', '\\x01'), ('2026-01-02', 'OLDCODE1', '\\x02'), ('2026-01-02', 'OLDCODE1', '\\x03')`
      assert.is((await migrate(sql, MIGRATIONS_DIR))[0], 10, 'the migrations from 0010 on are applied, 0010 first')
      const { days } = (await readStats(sql, '00000000-0000-4000-8000-000000000001', 'OLDCODE1', '2026-01-01', '2026-01-02'))!
      assert.equal(days.map((d) => [d.day, d.uniques]).sort(), [['2026-01-01', 4], ['2026-01-02', 3]])
      const [gone] = await sql<{ t: string | null }[]>`select to_regclass('visit_hashes')::text as t`
      assert.is(gone!.t, null)
    } finally {
      await sql.end({ timeout: 1 })
      rmSync(before, { recursive: true, force: true })
      await db.drop()
    }
  })

  test.run()
}
