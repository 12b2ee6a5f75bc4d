// The system's `unzip` reads what the service wrote: a check by a program that is not ours.
// Installed with apt-get where it is missing; without it the tests that need it say so and pass.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const hasUnzip = (): boolean => spawnSync('unzip', ['-v'], { stdio: 'ignore' }).status === 0

/** `unzip -t` must pass; returns each file's text by name. */
export function unzipAll(archive: Buffer): { test: string; files: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'unzip-'))
  try {
    const file = join(dir, 'a.zip')
    writeFileSync(file, archive)
    const tested = spawnSync('unzip', ['-t', file], { encoding: 'utf8' })
    if (tested.status !== 0) throw new Error(`unzip -t failed: ${tested.stdout}${tested.stderr}`)
    const out = join(dir, 'out')
    const extracted = spawnSync('unzip', ['-q', file, '-d', out], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C.UTF-8' } })
    if (extracted.status !== 0) throw new Error(`unzip failed: ${extracted.stderr}`)
    return { test: tested.stdout, files: Object.fromEntries(readdirSync(out).map((n) => [n, readFileSync(join(out, n), 'utf8')])) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
