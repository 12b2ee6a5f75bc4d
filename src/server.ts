// Entry point: `node dist/server.js`. Reads the config, then serves in this process, or with
// WORKERS > 1 runs that many workers sharing the port and restarts any that dies.
import cluster, { type Worker } from 'node:cluster'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ConfigError, loadConfig, type Config } from './config.js'
import { restartWithWasmFlag } from './db/embedded.js'
import { MIGRATIONS_DIR } from './db/migrate.js'
import { createLogger, type Logger } from './log.js'
import { threadSink } from './log-sink.js'
import { clusterScrape, startMetricsServer } from './metrics-server.js'
import { startService } from './service.js'

// dist/server.js → dist/app, which scripts/build-app.mjs writes; build/src/server.js (the test
// build) → build/app. Where neither is built, the first: the start then says what is missing.
const APP_DIRS = [new URL('./app/', import.meta.url), new URL('../app/', import.meta.url)].map((u) => fileURLToPath(u))
const APP_DIR = APP_DIRS.find((dir) => existsSync(join(dir, 'index.html'))) ?? APP_DIRS[0]!
const RESTART_DELAY_MS = 1_000

async function main(): Promise<void> {
  let config: Readonly<Config>
  try {
    config = loadConfig()
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`configuration error: ${err.message}\n`)
    process.exit(78) // EX_CONFIG: systemd's RestartPreventExitStatus can stop retrying it
  }
  // The embedded engine's V8 flag, where only a start can set it (db/embedded.ts); returns only if it cannot.
  if (config.databaseUrl === undefined) restartWithWasmFlag()
  // Log lines are written by a thread of their own: a stalled stdout never stops the answers.
  const sink = threadSink()
  const log = createLogger(config.logLevel, (text) => sink.write(text))
  const exit = (code: number) => {
    log.flush()
    void sink.close().finally(() => process.exit(code))
  }
  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config, log, exit)
  await serve(config, log, exit)
}

async function serve(config: Readonly<Config>, log: Logger, exit: (code: number) => void): Promise<void> {
  // Listen for signals before starting: a stop during migrations waits for them to finish,
  // then shuts down cleanly, instead of killing the process mid-transaction.
  let stopSignal: string | undefined
  let stop = (signal: string) => {
    stopSignal ??= signal
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  log.info('starting', { database: config.databaseUrl === undefined ? `embedded (${config.dataDir})` : 'postgresql' })

  const service = await startService(config, log, MIGRATIONS_DIR, APP_DIR)
  log.info('listening', {
    url: service.url,
    base_url: service.deps.baseUrl,
    database: service.db.embedded ? `embedded (${config.dataDir})` : 'postgresql',
  })
  let stopping = false
  stop = (signal: string) => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal })
    service.close().then(
      () => {
        log.info('stopped')
        exit(0)
      },
      (err: unknown) => {
        log.error('shutdown failed', { err })
        exit(1)
      },
    )
  }
  if (stopSignal !== undefined) stop(stopSignal)
}

function runPrimary(config: Readonly<Config>, log: Logger, exit: (code: number) => void): void {
  let stopping = false
  // Our own count: Node drops a worker from cluster.workers only once it has both exited and
  // disconnected, and the two events come in either order.
  const alive = new Set<Worker>()
  const fork = () => alive.add(cluster.fork())
  for (let i = 0; i < config.workers; i++) fork()
  const stopped = () => {
    log.info('stopped')
    exit(0)
  }
  cluster.on('exit', (worker, code, signal) => {
    alive.delete(worker)
    if (stopping) {
      if (alive.size === 0) stopped()
      return
    }
    log.error('worker died; restarting it', { worker_pid: worker.process.pid, code, signal })
    setTimeout(() => stopping || fork(), RESTART_DELAY_MS)
  })
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    log.info('shutting down workers', { signal })
    // A worker that died just before is not restarted now; if none is left, there is no 'exit' to wait for.
    if (alive.size === 0) return stopped()
    for (const worker of alive) worker.process.kill('SIGTERM')
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  log.info('primary started', { workers: config.workers })
  if (config.metricsPort !== undefined) {
    startMetricsServer(config.metricsHost, config.metricsPort, clusterScrape(), log).catch((err: unknown) => {
      log.error('metrics listener failed to start', { err })
      stop('SIGTERM')
    })
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})
