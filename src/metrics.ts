// Prometheus metrics: what the service is doing, for an operator's scraper. The hot
// path pays for a counter and a histogram bucket; everything that is a state (cache size, visits
// waiting, hashes running) is read only when scraped. Served on its own listener (METRICS_PORT,
// see metrics-server.ts), never on the public port.
import client from 'prom-client'

export type RedirectOutcome = 'hit' | 'miss' | 'unknown' | 'expired' | 'disabled' | 'exhausted'
const OUTCOMES: readonly RedirectOutcome[] = ['hit', 'miss', 'unknown', 'expired', 'disabled', 'exhausted']

export interface Metrics {
  /** false: every call below does nothing, and requests are not timed for it */
  readonly enabled: boolean
  /** one answered request: its route pattern ("GET /r/:code", or "unmatched") */
  request(route: string, status: number, seconds: number): void
  redirect(outcome: RedirectOutcome): void
  /** a query that failed because the database could not be reached */
  databaseError(): void
  poolReplaced(): void
  visitFlush(seconds: number): void
  /** one source's refresh: its outcome and how long it took */
  blocklistRefresh(source: string, outcome: 'updated' | 'unchanged' | 'failed', seconds: number): void
  /** a source's refresh read a feed and refused it (counted as failed too): empty, invalid, shrink or too_large */
  blocklistRefused(source: string, reason: string): void
  /** a report received (or deduplicated: counted all the same) */
  reportReceived(reason: string): void
  /** one destination check: what it found (ok, broken, unreachable, flagged, deferred) */
  linkCheck(result: string): void
}

export const NO_METRICS: Metrics = Object.freeze({
  enabled: false,
  request() {},
  redirect() {},
  databaseError() {},
  poolReplaced() {},
  visitFlush() {},
  blocklistRefresh() {},
  blocklistRefused() {},
  reportReceived() {},
  linkCheck() {},
})

/** States read at scrape time. */
export interface Gauges {
  cache(): { entries: number; bytes: number; evictions: number }
  visitsWaiting(): number
  hashes(): { running: number; waiting: number }
  database(): { poolMax: number; waiting: number; statements: number }
  /** the primary and each read replica: lag-tolerant reads sent to each, and its state */
  reads(): Array<{ name: string; up: boolean; lagSeconds: number; reads: number; failures: number }>
  /** the change feed (undefined on the embedded database, which has none) */
  feed(): { up: boolean; losses: number } | undefined
  /** read from the database when scraped: the same for every node */
  shared(): Promise<{ sources: Array<{ name: string; entries: number; invalid_lines: number; failures: number }>; reportsOpen: number }>
}

// Seconds: a cached redirect takes tens of microseconds, a login a few hundred milliseconds.
const DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** How long a scrape waits for the figures read from the database. */
const SHARED_WAIT_MS = 2_000
const PREFIX = 'link_service_'
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const

export function createMetrics(gauges: Gauges): { metrics: Metrics; registry: client.Registry } {
  const registry = new client.Registry()
  // The process defaults keep their usual names (process_cpu_seconds_total, nodejs_heap_size_used_bytes...).
  client.collectDefaultMetrics({ register: registry })
  const registers = [registry]

  const requests = new client.Counter({
    name: `${PREFIX}http_requests_total`,
    help: 'Answered requests by route pattern and status class.',
    labelNames: ['route', 'status_class'],
    registers,
  })
  const durations = new client.Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'Time from the request to its answer, by route pattern.',
    labelNames: ['route'],
    buckets: DURATION_BUCKETS,
    registers,
  })
  const denials = new client.Counter({
    name: `${PREFIX}rate_limit_denials_total`,
    help: 'Requests answered 429 by route pattern (request rate, failed-login backoff).',
    labelNames: ['route'],
    registers,
  })
  const redirects = new client.Counter({
    name: `${PREFIX}redirects_total`,
    help: 'Redirect requests by outcome: hit (from the cache), miss (read from the database), unknown, expired, disabled.',
    labelNames: ['outcome'],
    registers,
  })
  for (const outcome of OUTCOMES) redirects.inc({ outcome }, 0) // every outcome shows, at 0 until seen
  const dbErrors = new client.Counter({
    name: `${PREFIX}db_errors_total`,
    help: 'Database operations that failed because the database could not be reached.',
    registers,
  })
  const poolReplacements = new client.Counter({
    name: `${PREFIX}db_pool_replacements_total`,
    help: 'Times the connection pool stopped answering while the database answered, and was replaced.',
    registers,
  })
  const flushes = new client.Histogram({
    name: `${PREFIX}visit_flush_duration_seconds`,
    help: 'Time each write of counted visits to the database took.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  })

  const gauge = (name: string, help: string, read: () => number) =>
    new client.Gauge({
      name: `${PREFIX}${name}`,
      help,
      registers,
      collect() {
        this.set(read())
      },
    })
  /** A counter kept elsewhere, read when scraped. */
  const total = (name: string, help: string, read: () => number) =>
    new client.Counter({
      name: `${PREFIX}${name}`,
      help,
      registers,
      collect() {
        this.reset()
        this.inc(read())
      },
    })
  gauge('redirect_cache_entries', 'Codes held by the redirect cache.', () => gauges.cache().entries)
  gauge('redirect_cache_bytes', 'Bytes the redirect cache counts against CACHE_MAX_BYTES.', () => gauges.cache().bytes)
  total('redirect_cache_evictions_total', 'Entries the redirect cache dropped to stay within CACHE_MAX_BYTES.', () => gauges.cache().evictions)
  gauge('visits_waiting', 'Visits counted in memory, waiting for the next flush.', () => gauges.visitsWaiting())
  gauge('password_hashes_running', 'Password hashes being computed on the KDF threads.', () => gauges.hashes().running)
  gauge('password_hashes_waiting', 'Password hashes waiting for a KDF thread.', () => gauges.hashes().waiting)
  gauge('db_pool_max_connections', 'Connections the database pool may open.', () => gauges.database().poolMax)
  gauge('db_requests_waiting', 'Requests waiting on the database now.', () => gauges.database().waiting)
  type Pool = ReturnType<Gauges['reads']>[number]
  const poolGauge = (name: string, help: string, read: (p: Pool) => number) =>
    new client.Gauge({
      name: `${PREFIX}${name}`,
      help,
      labelNames: ['pool'],
      registers,
      collect() {
        for (const p of gauges.reads()) this.set({ pool: p.name }, read(p))
      },
    })
  const poolTotal = (name: string, help: string, read: (p: Pool) => number) =>
    new client.Counter({
      name: `${PREFIX}${name}`,
      help,
      labelNames: ['pool'],
      registers,
      collect() {
        this.reset()
        for (const p of gauges.reads()) this.inc({ pool: p.name }, read(p))
      },
    })
  poolGauge('db_read_pool_up', 'Whether a pool takes lag-tolerant reads (DATABASE_READ_URL): a replica that answers and is less than 30 s behind; the primary always.', (p) => Number(p.up))
  poolGauge('db_read_pool_lag_seconds', 'How far a read replica was behind the primary at its last check (0 for the primary).', (p) => p.lagSeconds)
  poolTotal('db_reads_total', 'Lag-tolerant reads (statistics, redirect misses) answered by each pool; the primary counts those no replica could take or knew.', (p) => p.reads)
  poolTotal('db_read_failures_total', 'Reads a replica failed or did not answer in time (each then sent to the primary, and the replica skipped until it answers).', (p) => p.failures)
  gauge('change_feed_up', 'Whether the change feed is up: its own notice came back within seconds (1), or it is down (0); 1 on the embedded database, which needs none.', () => Number(gauges.feed()?.up ?? 1))
  total('change_feed_losses_total', 'Times the change feed was found down (closed, or its own notice not back in time).', () => gauges.feed()?.losses ?? 0)
  total('db_statements_total', 'Statements sent to the database (each a round trip, or part of a transaction of them).', () => gauges.database().statements)

  const feedRefreshes = new client.Counter({
    name: `${PREFIX}blocklist_refreshes_total`,
    help: 'Threat-feed refreshes by this node, by source and outcome: updated, unchanged (a conditional read said so), failed (the last good list stays).',
    labelNames: ['source', 'outcome'],
    registers,
  })
  const feedRefusals = new client.Counter({
    name: `${PREFIX}blocklist_refused_total`,
    help: 'Threat-feed refreshes by this node that read a feed and refused it, keeping the last good list, by source and reason: empty (no entry, where the list had some), invalid (mostly invalid lines), shrink (it would lose more than half the list), too_large (too many hosts).',
    labelNames: ['source', 'reason'],
    registers,
  })
  const feedDurations = new client.Histogram({
    name: `${PREFIX}blocklist_refresh_duration_seconds`,
    help: 'Time one threat-feed refresh took (read, parse and load), by source.',
    labelNames: ['source'],
    buckets: [0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers,
  })
  const reports = new client.Counter({
    name: `${PREFIX}reports_received_total`,
    help: 'Abuse reports received, by reason (a repeat from the same address is counted, not stored).',
    labelNames: ['reason'],
    registers,
  })
  const linkChecks = new client.Counter({
    name: `${PREFIX}link_checks_total`,
    help: 'Destination checks made by this node, by what each found (a first failure counts as found, though not shown yet).',
    labelNames: ['result'],
    registers,
  })
  // The same figures on every node, read from the database: a cluster's primary keeps one, not the sum.
  // A scrape waits for them at most SHARED_WAIT_MS (the pool may be busy, or the database away):
  // then it shows the last ones read.
  let shared: ReturnType<Gauges['shared']> | undefined
  let lastShared: Awaited<ReturnType<Gauges['shared']>> | undefined
  const readShared = () =>
    (shared ??= new Promise<Awaited<ReturnType<Gauges['shared']>>>((resolve, reject) => {
      const timer = setTimeout(() => (lastShared === undefined ? reject(new Error('the shared gauges were not read in time')) : resolve(lastShared)), SHARED_WAIT_MS)
      gauges.shared().then(
        (value) => {
          clearTimeout(timer)
          resolve((lastShared = value))
        },
        (err: unknown) => {
          clearTimeout(timer)
          if (lastShared === undefined) reject(err)
          else resolve(lastShared)
        },
      )
    }).finally(() => setTimeout(() => (shared = undefined), 1_000).unref()))
  const perSource = (name: string, help: string, pick: (s: { entries: number; invalid_lines: number; failures: number }) => number) =>
    new client.Gauge({
      name: `${PREFIX}${name}`,
      help,
      labelNames: ['source'],
      aggregator: 'max',
      registers,
      async collect() {
        this.reset()
        for (const s of (await readShared()).sources) this.set({ source: s.name }, pick(s))
      },
    })
  perSource('blocklist_entries', 'Block-list entries loaded from each threat feed.', (s) => s.entries)
  perSource('blocklist_invalid_lines', 'Lines of the last loaded feed that gave no host, per source.', (s) => s.invalid_lines)
  perSource('blocklist_failures', 'Failed refreshes of a source since its last good one.', (s) => s.failures)
  new client.Gauge({
    name: `${PREFIX}reports_open`,
    help: 'Abuse reports waiting for an operator.',
    aggregator: 'max',
    registers,
    async collect() {
      this.set((await readShared()).reportsOpen)
    },
  })

  // Children bound once per route: the hot path does no label lookup by name.
  const byRoute = new Map<string, { count: client.Counter<string>[]; duration: client.Histogram<string>; denied: client.Counter<string> }>()
  const boundFor = (route: string) => {
    let bound = byRoute.get(route)
    if (bound === undefined) {
      const count = STATUS_CLASSES.map((c) => requests.labels(route, c)) as unknown as client.Counter<string>[]
      bound = { count, duration: durations.labels(route) as unknown as client.Histogram<string>, denied: denials.labels(route) as unknown as client.Counter<string> }
      byRoute.set(route, bound)
    }
    return bound
  }
  const outcome = new Map(OUTCOMES.map((o) => [o, redirects.labels(o)]))

  const metrics: Metrics = {
    enabled: true,
    request(route, status, seconds) {
      const bound = boundFor(route)
      bound.count[Math.min(Math.max(Math.floor(status / 100), 1), 5) - 1]!.inc()
      bound.duration.observe(seconds)
      if (status === 429) bound.denied.inc()
    },
    redirect: (o) => outcome.get(o)!.inc(),
    databaseError: () => dbErrors.inc(),
    poolReplaced: () => poolReplacements.inc(),
    visitFlush: (seconds) => flushes.observe(seconds),
    blocklistRefresh(source, outcome, seconds) {
      feedRefreshes.inc({ source, outcome })
      if (outcome !== 'failed') feedDurations.observe({ source }, seconds)
    },
    blocklistRefused: (source, reason) => feedRefusals.inc({ source, reason }),
    reportReceived: (reason) => reports.inc({ reason }),
    linkCheck: (result) => linkChecks.inc({ result }),
  }
  return { metrics, registry }
}
