// Starts one serving process: database, migrations, background jobs and the HTTP server.
// server.ts calls it from the command line; the tests call it with their own config.
import cluster from 'node:cluster'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Registry } from 'prom-client'
import type { Duplex } from 'node:stream'
import type { AddressInfo, Socket } from 'node:net'
import { createApp, type App } from './app.js'
import { SessionCache } from './auth/session-cache.js'
import { deleteExpiredSessions } from './auth/sessions.js'
import { sweepIdempotencyKeys } from './idempotency.js'
import { baseUrlFor, type Config } from './config.js'
import type { Deps } from './context.js'
import { listSources } from './blocklist/queries.js'
import { startRefreshJob, type RefreshJob } from './blocklist/refresh.js'
import { Circuit } from './db/circuit.js'
import { openDatabase } from './db/open.js'
import { retryingConflicts } from './db/retry.js'
import { FLUSH_ALL } from './db/channels.js'
import { ReadPools } from './db/read-pools.js'
import type { Database, Sql } from './db/types.js'
import { WriteHealth } from './health.js'
import { LinkChangeFeed } from './change-feed.js'
import { migrate } from './db/migrate.js'
import { settlesWithin } from './settle.js'
import { Deadline } from './time-limit.js'
import { declaresTooMuch } from './http/body.js'
import { answerClientError, answerConnect } from './http/client-errors.js'
import { LocationLoader } from './links/location-loader.js'
import { VisitCaps } from './links/caps.js'
import { RedirectCache } from './links/redirect-cache.js'
import { startStatsJob } from './stats/job.js'
import { openCountries } from './stats/geo.js'
import { Memo } from './stats/memo.js'
import { VisitCounter } from './stats/visits.js'
import { ExperimentCounter } from './experiments/counter.js'
import { experimentSecret } from './experiments/queries.js'
import type { Logger } from './log.js'
import { createMetrics, NO_METRICS, type Metrics } from './metrics.js'
import { reportToPrimary, startMetricsServer } from './metrics-server.js'
import { Passwords } from './passwords/passwords.js'
import { MemoryLeakyBuckets, PostgresLeakyBuckets, sweepStoredBuckets, type LeakyBuckets } from './ratelimit/leaky.js'
import { MemoryLimiter, PostgresLimiter, type Limiter } from './ratelimit/limiter.js'
import { countOpenReports } from './reports/queries.js'
import { AppFiles } from './web/static-files.js'
import { startDeliveries, type Deliveries } from './webhooks/deliveries.js'
import { LinkChecker, linkCheckPollMs } from './link-checks/checker.js'

const SESSION_SWEEP_MS = 60_000
// With SHUTDOWN_TIMEOUT_MS at its 10 s default, a stop takes at most 10 + 3 + 1 + 3 s: inside
// the 20 s TimeoutStopSec of scripts/link-service.service.
const FINAL_FLUSH_MS = 3_000
const DB_CLOSE_SECONDS = 3
const STOP_STEP_MS = 5_000
const MAX_HEADER_BYTES = 16 * 1024

export interface Service {
  server: Server
  url: string
  /** the metrics listener's base URL, when this process serves METRICS_PORT */
  metricsUrl: string | undefined
  deps: Deps
  db: Database
  /** the cross-node cache invalidation feed; only with a real PostgreSQL */
  feed: LinkChangeFeed | undefined
  /** this node's webhook deliveries */
  webhooks: Deliveries
  /** the threat feeds' refresh job, when BLOCKLIST_SOURCES lists any */
  blocklist: RefreshJob | undefined
  close(): Promise<void>
}

/** `appDir` holds the web app's built files (dist/app), served at /app/ unless SERVE_APP=off. */
export async function startService(config: Readonly<Config>, log: Logger, migrationsDir: string, appDir: string): Promise<Service> {
  // Before the database: a build without the app fails at once, with nothing to undo.
  const appFiles = config.serveApp ? new AppFiles(appDir) : undefined
  let metrics: Metrics = NO_METRICS
  const db = await openDatabase(config.databaseUrl, config.dataDir, config.dbTimeoutMs, () => {
    metrics.poolReplaced()
    log.warn('database pool stopped answering while the database answers; replaced it')
  }, config.databasePrepare)
  // What start-up sets going, with how to stop it: stopped in reverse by close(), and also if a
  // later step of start-up fails (a port in use, say), so the database and the embedded one's
  // lock are not left open.
  const started: Array<() => unknown> = [() => db.close(DB_CLOSE_SECONDS)]
  const stopAll = async (quietly: boolean) => {
    for (const stop of [...started].reverse()) {
      // Each step is bounded: a driver that never settles must not hold the stop past systemd's limit.
      const step = Promise.resolve().then(stop)
      const outcome = await settlesWithin(step, STOP_STEP_MS).catch((err: unknown) => {
        if (!quietly) throw err
        return 'done' as const
      })
      if (outcome === 'late') log.warn('a shutdown step did not finish in time; going on')
    }
  }
  try {
    const applied = await migrate(db.sql, migrationsDir)
    if (applied.length > 0) log.info('migrations applied', { versions: applied })

    const cache = new RedirectCache(config.cacheMaxBytes, config.negativeCacheMs)
    const sessions = new SessionCache(config.sessionCacheMs)
    // Several nodes may share a real database: they learn of each other's link writes by NOTIFY,
    // and share the rate limit's buckets. The embedded database has one process only.
    // Lag-tolerant reads go to the replicas of DATABASE_READ_URL (none: to the primary).
    const reads = new ReadPools(db.sql, config.databaseReadUrls, { prepare: config.databasePrepare, connectTimeoutSeconds: 2 })
    started.push(() => reads.close())
    // Visit caps are taken by blocks; a changed cap (or another node waiting) ends this node's block.
    const circuit = new Circuit(undefined, config.dbTimeoutMs)
    const caps = new VisitCaps(db.sql, circuit)
    caps.start()
    started.push(() => caps.stop())
    const linkChanged = (code: string) => {
      if (code === FLUSH_ALL) return reads.changedAll()
      reads.changed(code)
      caps.release(code)
    }
    // Webhook deliveries start last (they need the port for short_url); a notice before is seen by their first claim.
    let webhooks: Deliveries | undefined
    const feed = db.url === undefined ? undefined : new LinkChangeFeed(config.databaseListenUrl ?? db.url, db.sql, cache, sessions, log, config.cacheStaleMs, linkChanged, () => webhooks?.wake(), (code) => caps.release(code))
    if (feed !== undefined) {
      started.push(() => feed.stop())
      await feed.start()
    }
    const limiter: Limiter = db.url === undefined ? new MemoryLimiter() : new PostgresLimiter(db.sql)
    started.push(() => limiter.close())
    const buckets: LeakyBuckets = db.url === undefined ? new MemoryLeakyBuckets() : new PostgresLeakyBuckets(db.sql)
    started.push(() => buckets.close())
    const passwords = new Passwords(config.argon2, config.kdfThreads, config.kdfIdleMs)
    started.push(() => passwords.close())
    const writes = new WriteHealth()
    let registry: Registry | undefined
    if (config.metricsPort !== undefined) {
      ;({ metrics, registry } = createMetrics({
        cache: () => ({ entries: cache.size, bytes: cache.bytes, evictions: cache.evictions }),
        visitsWaiting: () => visits.waiting,
        hashes: () => ({ running: passwords.pool.running, waiting: passwords.pool.waiting }),
        database: () => ({ poolMax: db.poolMax, waiting: Deadline.waiting, statements: db.statements() }),
        reads: () => reads.stats(),
        feed: () => (feed === undefined ? undefined : { up: feed.listening, losses: feed.losses }),
        shared: () => readSharedGauges(db.sql),
      }))
    }
    // Redirect rules' countries; the file is read at the first look-up (geo.ts). The statistics'
    // are looked up on the tally thread, which opens the file itself.
    const countryOf = await openCountries(config.geoDb, log)
    const countries = new Memo<string>(1000)
    const visits = new VisitCounter(db.sql, log, { flushMs: config.visitFlushMs, stats: config.visitStats, trustProxy: config.trustProxy, geoDb: config.geoDb, metrics })
    visits.start()
    // A database that stopped answering (no reset, no refusal) must not hold a stop past
    // systemd's TimeoutStopSec: the last flush gets a few seconds, then the pool is ended.
    started.push(async () => {
      if ((await settlesWithin(visits.stop(), FINAL_FLUSH_MS)) === 'late') {
        log.warn('final visit flush did not finish; visits since the last flush are lost')
      }
    })
    const experiments = new ExperimentCounter(db.sql, log, await experimentSecret(db.sql),
      { flushMs: config.visitFlushMs, windowDays: config.conversionWindowDays, retentionDays: config.statsRetentionDays }, (code) => deps.forgetLinks([code]))
    experiments.start()
    started.push(() => settlesWithin(experiments.stop(), FINAL_FLUSH_MS))
    const sweep = setInterval(() => {
      deleteExpiredSessions(db.sql).catch((err: unknown) => log.warn('session sweep failed', { err }))
      sweepIdempotencyKeys(db.sql).catch((err: unknown) => log.warn('idempotency key sweep failed', { err }))
      // create_link keeps each account's creates in leaky_buckets on either engine; on PostgreSQL
      // the shared buckets sweep them already.
      if (db.embedded) sweepStoredBuckets(db.sql).catch((err: unknown) => log.warn('bucket sweep failed', { err }))
    }, SESSION_SWEEP_MS).unref()
    started.push(() => clearInterval(sweep))
    const statsJob = startStatsJob(db.sql, log, config.statsRetentionDays)
    started.push(() => statsJob.stop())
    let blocklist: RefreshJob | undefined
    if (config.blocklistSources.length > 0) {
      const job = startRefreshJob(db, config.blocklistSources, config.blocklistRefreshSeconds, log, metrics, () => cache.clear())
      started.push(() => job.stop())
      blocklist = job
    }

    const deps: Deps = {
      config,
      // A request's statement or transaction that loses a deadlock (or a serialization failure)
      // is run again (db/retry.ts): the user never sees the database's conflicts as a 503.
      sql: retryingConflicts(db.sql, (err) => log.debug('database conflict; running it again', { code: (err as { code: string }).code })),
      baseUrl: '', // set once the port is known
      limiter,
      cache,
      sessions,
      locations: new LocationLoader(db.sql, circuit, reads),
      reads,
      caps,
      circuit,
      visits,
      experiments,
      // A look-up costs about a microsecond; visitors come back, so the redirect's are remembered.
      countryOf: (address) => countries.get(address, countryOf),
      writes,
      feedState: () => (feed === undefined ? 'none' : feed.listening ? 'up' : 'down'),
      log,
      passwords,
      buckets,
      metrics,
      appFiles,
      forgetLinks: (codes) => {
        for (const code of codes) {
          cache.invalidate(code)
          linkChanged(code)
        }
      },
      linkChecks: undefined, // started with the deliveries, once BASE_URL is known
    }
    const app = createApp(deps)
    // A request read on a connection the drain has ended is not run: its client saw the close first.
    const dispatch = (req: IncomingMessage, res: ServerResponse) => (req.socket.writableEnded ? void req.resume() : app.listener(req, res))
    const server = createServer(
      {
        maxHeaderSize: MAX_HEADER_BYTES,
        // Slow clients cannot hold a connection: whole headers within 10 s, whole request in 30 s.
        headersTimeout: 10_000,
        requestTimeout: 30_000,
        keepAliveTimeout: 5_000,
        connectionsCheckingInterval: 1_000,
        // The app answers a missing Host itself, with X-Request-Id and our error shape.
        requireHostHeader: false,
      },
      dispatch,
    )
    // "Expect: 100-continue": invite the body only when it may be sent; otherwise the app answers
    // 413 at once and the client never uploads it.
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      if (req.socket.writableEnded) return void req.resume()
      if (!declaresTooMuch(req)) res.writeContinue()
      app.listener(req, res)
    })
    server.on('checkExpectation', dispatch)
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket, app.routeError))
    server.on('connect', answerConnect)
    const conns = trackSockets(server)
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(config.port, config.host, () => resolve())
    })
    // With WORKERS > 1 the primary serves the metrics of every worker (server.ts).
    let metricsUrl: string | undefined
    if (registry !== undefined && cluster.isWorker) reportToPrimary(registry)
    else if (registry !== undefined) {
      const metricsServer = await startMetricsServer(config.metricsHost, config.metricsPort!, () => registry.metrics(), log)
      started.push(() => metricsServer.close())
      metricsUrl = metricsServer.url
    }
    const port = (server.address() as AddressInfo).port
    deps.baseUrl = baseUrlFor(config, port)
    // Deliveries start once short_url can be written; stopped before the database closes.
    const deliveries = startDeliveries(db, log, config.webhooks, deps.baseUrl, config.dbTimeoutMs, config.databasePrepare)
    webhooks = deliveries
    started.push(() => deliveries.stop())
    if (config.linkChecks.enabled) {
      const checker = new LinkChecker(db.sql, log, config.linkChecks, metrics, () => deps.baseUrl, (code) => deps.forgetLinks([code]))
      checker.start(linkCheckPollMs(config.linkChecks.intervalSeconds))
      deps.linkChecks = checker
      started.push(() => checker.stop())
    }
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`

    let closing: Promise<void> | undefined
    const close = () =>
      (closing ??= (async () => {
        await stopAccepting(server, app, conns, config.shutdownTimeoutMs)
        await stopAll(false)
      })())
    return { server, url, metricsUrl, deps, db, feed, webhooks: deliveries, blocklist, close }
  } catch (err) {
    await stopAll(true)
    throw err
  }
}

/** The metrics that are the same on every node: the threat feeds' state and the open reports. */
async function readSharedGauges(sql: Sql) {
  const [sources, reportsOpen] = await Promise.all([listSources(sql), countOpenReports(sql)])
  return { sources, reportsOpen }
}

/**
 * A drain: stop listening; from now on every answer carries Connection: close. After one poll of
 * the event loop, a connection with nothing of a request read is ended with a FIN (Node's own
 * closeIdleConnections destroys them, which resets a client whose next request is already on its way), and a request read on it
 * later is never dispatched: the client sees the close before any answer, so it knows nothing
 * was done. A connection part way through reading a request is left to answer it, with
 * Connection: close. In-flight requests get `timeoutMs`.
 */
async function stopAccepting(server: Server, app: App, conns: Set<Socket>, timeoutMs: number): Promise<void> {
  app.drain()
  // Answers already under way end their connections too.
  for (const socket of conns) {
    const res = busyWith(socket)
    if (res !== null && !res.headersSent) res.shouldKeepAlive = false
  }
  // One poll of the event loop first: connections already made are accepted and requests already
  // in a socket's buffer are read (and answered, with Connection: close) rather than met with a
  // FIN or, for a connection not yet accepted, a reset. Both wait there when the loop was busy at
  // the signal, say with a long query on the embedded database.
  await new Promise((resolve) => setImmediate(resolve))
  // server.close() calls this too (Node 19+): with this override it ends gently, it never resets.
  server.closeIdleConnections = () => {
    const unread = socketsBetweenRequests(server)
    for (const socket of conns) if (busyWith(socket) === null && unread.has(socket) && !socket.writableEnded) socket.end()
  }
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  const timer = setTimeout(() => server.closeAllConnections(), timeoutMs)
  await closed
  clearTimeout(timer)
}

/**
 * The connections whose parser is between requests, with no byte of the next one read: Node's
 * own list (the one its closeIdleConnections and headersTimeout use), under its symbol.
 */
function socketsBetweenRequests(server: Server): Set<Socket> {
  const key = Object.getOwnPropertySymbols(server).find((s) => s.description === 'http.server.connections')
  const list = key === undefined ? undefined : (server as unknown as Record<symbol, { idle(): Array<{ socket: Socket }> }>)[key]
  // Without the list (a Node that renamed it), no connection is known to be between requests:
  // none is ended early, and each ends after its answer (Connection: close) or at the timeout.
  return new Set(list?.idle().map((parser) => parser.socket) ?? [])
}

/** Every open connection of the server (a 'connection' listener: nothing per request). */
function trackSockets(server: Server): Set<Socket> {
  const all = new Set<Socket>()
  server.on('connection', (socket: Socket) => {
    all.add(socket)
    socket.once('close', () => all.delete(socket))
  })
  return all
}

/**
 * The response a connection is answering now, if any. Node keeps it on the socket while it is
 * assigned (`_httpMessage`, set by assignSocket and cleared by detachSocket): reading it at the
 * drain spares the redirect path a listener per request.
 */
const busyWith = (socket: Socket): ServerResponse | null => (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? null
