// Boots the real service (startService) on port 0: the embedded database by default, or the
// PostgreSQL at DATABASE_URL. Each embedded server gets its own copy of one migrated template
// directory: a fresh initdb costs seconds, a copy a fraction of one.
import { randomBytes } from 'node:crypto'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { suite, type Test } from 'uvu'
import { loadConfig } from '../../src/config.js'
import { LINK_CHANNEL } from '../../src/db/channels.js'
import { MIGRATIONS_DIR } from '../../src/db/migrate.js'
import { createLogger } from '../../src/log.js'
import { startService, type Service } from '../../src/service.js'
import { sleep } from './wait.js'
import { TEST_ENV } from './test-env.js'

/** The test build's web app (scripts/test.sh builds it there) */
export const APP_DIR = resolve('build/app')
const ROOT = mkdtempSync(join(tmpdir(), 'link-service-test-'))
const TEMPLATE = join(ROOT, 'template')
let template: Promise<void> | undefined
let copies = 0
process.once('exit', () => rmSync(ROOT, { recursive: true, force: true }))

/** A migrated embedded data directory of its own (removed when the test process exits). */
export async function freshDataDir(): Promise<string> {
  template ??= (async () => {
    const config = loadConfig({ DATA_DIR: TEMPLATE, PORT: '0', LOG_LEVEL: 'error', ARGON2_MEMORY_KIB: '8', ARGON2_ITERATIONS: '1' })
    const service = await startService(config, createLogger('error', () => {}), MIGRATIONS_DIR, APP_DIR)
    await service.close()
  })()
  await template
  const dir = join(ROOT, `db${copies++}`)
  cpSync(TEMPLATE, dir, { recursive: true })
  return dir
}

export interface TestServer {
  url: string
  service: Service
  /** lines the service logged, for tests that check what is (not) logged */
  logs: string[]
  close(): Promise<void>
}

/** Environment overrides go through loadConfig, exactly as the service reads them. */
export async function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = process.env.DATABASE_URL === undefined && env.DATA_DIR === undefined ? await freshDataDir() : undefined
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    DATABASE_URL: process.env.DATABASE_URL,
    // Tests speak from 127.0.0.1 and pick a client address with X-Forwarded-For, so that
    // suites do not share one rate-limit bucket.
    TRUST_PROXY: '127.0.0.1',
    ...TEST_ENV,
    LOG_LEVEL: 'debug',
    ...env,
  })
  const logs: string[] = []
  const log = createLogger(config.logLevel, (text) => logs.push(...text.trimEnd().split('\n')))
  const service = await startService(config, log, MIGRATIONS_DIR, APP_DIR)
  return {
    url: service.url,
    service,
    logs,
    async close() {
      service.server.closeAllConnections()
      await service.close()
      if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * A suite whose `before` starts a server with these environment overrides into `ctx.srv` and
 * whose `after` closes it. `Extra` types more context that the suite's own hooks fill in: uvu
 * runs a suite's `before` hooks in the order they were added, so a further `before` sees `ctx.srv`.
 */
export function serverSuite<Extra extends object = {}>(
  name: string,
  env: Record<string, string> = {},
): Test<{ srv: TestServer } & Extra> {
  const s = suite<{ srv: TestServer } & Extra>(name)
  s.before(async (ctx) => {
    ctx.srv = await startServer(env)
  })
  s.after(async (ctx) => {
    await ctx.srv?.close()
  })
  return s
}

/**
 * Resolves once the server's change feed has handled every notification committed so far, so a
 * test can look at the cache without racing the notification of its own write (a node hears its
 * own NOTIFY too). PostgreSQL delivers notifications in commit order: cache a marker, notify it,
 * and its eviction means everything committed before it has arrived. Without a feed: at once.
 */
export async function feedSettled(srv: TestServer): Promise<void> {
  const { feed, db, deps } = srv.service
  if (feed === undefined) return
  const marker = `settle-${randomBytes(6).toString('hex')}`
  deps.cache.set(marker, 'https://marker.invalid/', deps.cache.epoch)
  await db.sql`select pg_notify(${LINK_CHANNEL}, ${marker})`
  for (const deadline = Date.now() + 5_000; deps.cache.get(marker) !== undefined; await sleep(2)) {
    if (Date.now() > deadline) throw new Error('the change feed did not deliver a notification within 5 s')
  }
}

/** A suite with two servers on one database (`ctx.a`, `ctx.b`): two nodes of one cluster. */
export function twoNodeSuite(name: string, env: Record<string, string> = {}): Test<{ a: TestServer; b: TestServer }> {
  const s = suite<{ a: TestServer; b: TestServer }>(name)
  s.before(async (ctx) => {
    ;[ctx.a, ctx.b] = await Promise.all([startServer(env), startServer(env)])
  })
  s.after(async (ctx) => {
    await Promise.all([ctx.a, ctx.b].map((srv) => srv?.close()))
  })
  return s
}
