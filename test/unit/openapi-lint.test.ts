// docs/openapi.json passes the linter that API users run: Redocly CLI's recommended rules, as
// redocly.yaml adjusts them (each rule it turns off has its reason there).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openApi } from '../helpers/openapi.js'

const CLI = join(createRequire(import.meta.url).resolve('@redocly/cli/package.json'), '..', 'bin', 'cli.js')
const CONFIG = resolve('redocly.yaml')

interface Problem {
  ruleId: string
  severity: 'error' | 'warn'
  message: string
  location: Array<{ pointer: string }>
}

/** Redocly's findings on a document, as "severity rule at pointer: message". */
function lint(file: string): string[] {
  const r = spawnSync(process.execPath, [CLI, 'lint', file, '--config', CONFIG, '--format', 'json'], {
    encoding: 'utf8',
    // No usage data sent, no look-up of a newer release: lint only.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  })
  let report: { totals: { errors: number; warnings: number }; problems: Problem[] }
  try {
    report = JSON.parse(r.stdout)
  } catch {
    throw new Error(`redocly lint gave no JSON report (status ${r.status}):\n${r.stdout}\n${r.stderr}`)
  }
  const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)
  assert.is(report.totals.errors + report.totals.warnings, problems.length, 'the totals count the problems listed')
  return problems
}

test('docs/openapi.json has no error and no warning under Redocly\'s recommended rules', () => {
  assert.equal(lint(resolve('docs/openapi.json')), [])
})

test('redocly.yaml starts from the recommended rules', () => {
  assert.match(readFileSync(CONFIG, 'utf8'), /^extends:\n {2}- recommended\n/m)
})

test('the lint notices a path with a trailing slash, and an operation with neither a 2xx nor a 3xx response', () => {
  const dir = mkdtempSync(join(tmpdir(), 'link-service-lint-'))
  try {
    const doc = structuredClone(openApi)
    delete doc.paths['/r/{code}'].get.responses['302']
    delete doc.paths['/r/{code}'].get.responses['200'] // the preview card's
    doc.paths['/links/'] = { get: { ...doc.paths['/app'].get, operationId: 'trailingSlash' } }
    const file = join(dir, 'openapi.json')
    writeFileSync(file, JSON.stringify(doc))
    const problems = lint(file)
    assert.ok(problems.some((p) => p.startsWith('error no-path-trailing-slash at #/paths/~1links~1:')), problems.join('\n'))
    assert.ok(problems.some((p) => p.startsWith('error rule/operation-success-or-redirect-response at #/paths/~1r~1{code}/get/responses:')), problems.join('\n'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the document names its licence and a server at the deployment\'s BASE_URL', () => {
  assert.type(openApi.info.license?.name, 'string')
  const server = openApi.servers.find((s: { url: string }) => s.url === '{BASE_URL}')
  assert.ok(server, 'a server whose url is {BASE_URL}')
  assert.match(server.variables.BASE_URL.default, /^https?:\/\/[^/]+$/)
})

test.run()
