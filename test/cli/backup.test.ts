// docs/deploy.md's backups: the blocks marked "run by test/cli/backup.test.ts"
// are run as they are written there, a backup and then a restore, and the restored data must
// export as the same stream as the original. Only the machine's names change: the paths and the
// database become a test's own, and the stand-ins below replace systemd and root's user switching.
// The wrapper the guide installs is written into a directory of this test, first on PATH.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import postgres from 'postgres'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { runCli } from '../helpers/cli.js'
import { embedded, exportRows, seedInstall } from '../helpers/install.js'
import { ADMIN_URL, freshDatabase, pgUnavailable } from '../helpers/pg.js'
import { freshDataDir } from '../helpers/server.js'

const DOC = readFileSync('docs/deploy.md', 'utf8')
const EXAMPLE_DATE = '2026-11-21'

/** The shell block that follows `<!-- run by test/cli/backup.test.ts: NAME -->` in the guide. */
function block(name: string): string {
  const found = new RegExp(`<!-- run by test/cli/backup\\.test\\.ts: ${name} -->\\n\`\`\`sh\\n([^]*?)\`\`\`\\n`).exec(DOC)
  if (found === null) throw new Error(`docs/deploy.md has no block "${name}" marked for this test`)
  return found[1]!
}

// The test is neither systemd nor several users: it stops and starts no service (none runs),
// runs every command as itself, and creates directories without owners.
const STAND_INS = `
set -euo pipefail
systemctl() { :; }
runuser() { shift 3; "$@"; }
install() {
  local args=()
  while (($#)); do case $1 in -o|-g) shift 2 ;; *) args+=("$1"); shift ;; esac; done
  command install "\${args[@]}"
}
`
const TMP = mkdtempSync(join(tmpdir(), 'link-service-backup-'))
process.once('exit', () => rmSync(TMP, { recursive: true, force: true }))
const BIN = join(TMP, 'bin')
mkdirSync(BIN)
// systemd-run's stand-in, for the guide's wrapper: the command with the unit's environment (its
// EnvironmentFile's KEY=value lines and its Environment=), as this user, stdin and stdout passed on.
writeFileSync(
  join(BIN, 'systemd-run'),
  `#!/bin/bash
set -euo pipefail
vars=()
while (($#)); do
  case $1 in
    -p) case $2 in
          EnvironmentFile=*) while IFS= read -r line; do [[ -z $line || $line == '#'* ]] || vars+=("$line"); done < "\${2#EnvironmentFile=}" ;;
          Environment=*) vars+=("\${2#Environment=}") ;;
        esac
        shift 2 ;;
    --*) shift ;;
    *) break ;;
  esac
done
exec env "\${vars[@]}" "$@"
`,
  { mode: 0o755 },
)

/** Runs the blocks with each of `names` (the guide's) replaced by its value (this test's). */
function runDocs(blocks: string[], names: Record<string, string>, env: Record<string, string>): Promise<{ status: number | null; stderr: string }> {
  let script = STAND_INS + blocks.join('\n')
  for (const [from, to] of Object.entries(names)) script = script.split(from).join(to)
  return new Promise((done, fail) => {
    const child = spawn('bash', ['-c', script], {
      env: {
        PATH: `${BIN}:${process.env.PATH}`,
        HOME: process.env.HOME,
        NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE,
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s))
    child.once('error', fail)
    child.once('close', (status) => done({ status, stderr }))
  })
}

/** An export's rows (exportRows: without what names the time). */
async function exported(env: Record<string, string>): Promise<string[]> {
  const r = await runCli(['export', '--sessions'], env)
  assert.is(r.status, 0, r.stderr)
  return exportRows(r.stdout)
}

const ENV_FILE = join(TMP, 'env')
writeFileSync(ENV_FILE, '# the service configuration\nLOG_LEVEL=info\n')

/** The guide's names for this machine's paths, and what they are here. */
function machine(extra: Record<string, string>): Record<string, string> {
  return {
    '/usr/local/sbin/link-service': join(BIN, 'link-service'),
    '/usr/local/bin/node': process.execPath,
    '/opt/link-service/dist/cli.js': resolve('build/src/cli.js'),
    '/etc/link-service/env': ENV_FILE,
    '/var/backups/link-service': join(TMP, 'backups'),
    '$(date +%F)': EXAMPLE_DATE,
    ...extra,
  }
}

test('embedded database: the guide\'s export, then its import into a new DATA_DIR, restore the same data', async () => {
  const dir = await freshDataDir()
  try {
    await seedInstall(embedded(dir))
    const original = await exported(embedded(dir))
    const names = machine({ '/var/lib/link-service': dir })
    const backup = await runDocs([block('cli'), block('embedded-backup')], names, {})
    assert.is(backup.status, 0, backup.stderr)
    assert.ok(existsSync(join(TMP, 'backups', `link-service-${EXAMPLE_DATE}.jsonl`)))
    const restore = await runDocs([block('cli'), block('embedded-restore')], names, {})
    assert.is(restore.status, 0, restore.stderr)
    assert.ok(existsSync(`${dir}.before-restore`))
    assert.equal(await exported(embedded(dir)), original)
    assert.is(original.filter((l) => l.startsWith('{"table":"links"')).length, 3)
  } finally {
    rmSync(dir, { recursive: true, force: true })
    rmSync(`${dir}.before-restore`, { recursive: true, force: true })
  }
})

test('PostgreSQL: the guide\'s pg_dump, then its pg_restore into a new database, restore the same data', async () => {
  const reason = await pgUnavailable()
  if (reason !== undefined) {
    process.stdout.write(`backup.test: PostgreSQL backup not run: ${reason}\n`)
    return
  }
  const db = await freshDatabase()
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
  // The guide's role and database are both link_service: here both are the test's database name.
  await admin`create role ${admin(db.name)}`
  try {
    await seedInstall({ DATABASE_URL: db.url })
    const original = await exported({ DATABASE_URL: db.url })
    const url = new URL(ADMIN_URL)
    const pgEnv = { PGHOST: url.hostname, PGPORT: url.port || '5432', PGUSER: decodeURIComponent(url.username) }
    const names = machine({ link_service: db.name })
    const backup = await runDocs([block('pg-backup')], names, pgEnv)
    assert.is(backup.status, 0, backup.stderr)
    const restore = await runDocs([block('pg-restore')], names, pgEnv)
    assert.is(restore.status, 0, restore.stderr)
    const restored = await exported({ DATABASE_URL: db.url })
    assert.equal(restored, original)
    assert.is(original.filter((l) => l.startsWith('{"table":"users"')).length, 2)
  } finally {
    await db.drop()
    await admin`drop role if exists ${admin(db.name)}`
    await admin.end({ timeout: 1 })
  }
})

test.run()
