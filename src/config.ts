// Configuration: read from the environment once, validated, frozen (contract §8).
// Nothing else in the service reads process.env.
import { BlockList, isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import { resolve } from 'node:path'
import { ARGON2_BOUNDS, type Argon2Params } from './passwords/phc.js'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
export type AccessLog = 'all' | 'api' | 'off'

export interface Config {
  host: string
  port: number
  databaseUrl: string | undefined
  /** a direct connection for the change feed's LISTEN, when DATABASE_URL goes through a pooler */
  databaseListenUrl: string | undefined
  /** read replicas for the reads that tolerate lag (statistics, redirect misses); may be empty */
  databaseReadUrls: readonly string[]
  /** named prepared statements (off behind a pooler in transaction mode that does not keep them) */
  databasePrepare: boolean
  dataDir: string
  /** undefined: derived from the listening port once it is known */
  baseUrl: string | undefined
  /** undefined: the app this service serves, {BASE_URL}/app (appUrlFor) */
  appUrl: string | undefined
  /** serve the web app's files at /app/ */
  serveApp: boolean
  sessionTtlSeconds: number
  trustProxy: BlockList | undefined
  logLevel: LogLevel
  /** which requests get an access-log line: every one, all but redirects, or none */
  accessLog: AccessLog
  workers: number
  /** byte budget of the redirect cache (0 disables it) */
  cacheMaxBytes: number
  /** how long an unknown code is remembered as unknown */
  negativeCacheMs: number
  visitFlushMs: number
  /** per-day visit statistics (humans, bots, referrers, uniques); off: only each link's total */
  visitStats: boolean
  /** how many days of per-day statistics are kept */
  statsRetentionDays: number
  /** how many days after its visit a click id may still report a conversion (at most 365: click-id.ts) */
  conversionWindowDays: number
  /** the country database (MMDB file) of the statistics: undefined for the bundled one, or "off" */
  geoDb: string | undefined
  /** the argon2id cost of new password hashes */
  argon2: Readonly<Argon2Params>
  /** worker threads that compute password hashes */
  kdfThreads: number
  /** the KDF threads stop after this long without a hash, and start again on the next */
  kdfIdleMs: number
  shutdownTimeoutMs: number
  /** time limit of one request's database work; past it, 503 */
  dbTimeoutMs: number
  /** how long cached redirects may be served while the change feed is down */
  cacheStaleMs: number
  /** how long a checked session may be trusted without reading it again (0: read every time) */
  sessionCacheMs: number
  /** the Prometheus listener's port (undefined: no metrics) and address */
  metricsPort: number | undefined
  metricsHost: string
  webhooks: Readonly<WebhookConfig>
  /** threat feeds: files (absolute paths) and http(s) URLs, each named as given */
  blocklistSources: ReadonlyArray<{ name: string; location: string }>
  /** how often each feed is read again */
  blocklistRefreshSeconds: number
  /** links one account may create per minute: the refill of its bucket of linkCreateBurst */
  linkCreatePerMinute: number
  /** links one account may create at once: its bucket's size (only a link created takes one) */
  linkCreateBurst: number
  /** accounts younger than this get a tenth of linkCreateBurst and linkCreatePerMinute (0: off) */
  newAccountHours: number
  /** open reports from distinct addresses that suspend a link until an operator looks (0: off) */
  reportsSuspendAfter: number
  linkChecks: Readonly<LinkCheckConfig>
  trust: Readonly<TrustConfig>
}

export interface LinkCheckConfig {
  /** destinations are checked in the background (LINK_CHECKS) */
  enabled: boolean
  /** seconds between two checks of one link */
  intervalSeconds: number
  /** checks the whole cluster starts per minute */
  perMinute: number
  /** destinations may resolve to loopback, private, link-local or this machine's addresses */
  allowPrivate: boolean
}

/** What the instance publishes about itself: security.txt, the transparency report, its block list. */
export interface TrustConfig {
  /** security.txt's Contact (mailto:, https: or tel:); undefined: no /.well-known/security.txt */
  securityContact: string | undefined
  /** security.txt's Policy */
  securityPolicyUrl: string | undefined
  /** security.txt's Preferred-Languages, as given ("en, de") */
  securityLanguages: string
  /** /transparency and /transparency.json */
  transparency: boolean
  /** /blocklist.txt: the operator's own blocks, for other instances to subscribe to */
  publicBlocklist: boolean
}

export interface WebhookConfig {
  /** the wait before each retry, in seconds; after the last, a delivery has failed */
  retrySeconds: readonly number[]
  /** how many days deliveries (and their attempts) are kept */
  retentionDays: number
  /** http:// endpoints are accepted (otherwise https only) */
  allowHttp: boolean
  /** endpoints may resolve to loopback, private, link-local or this machine's addresses */
  allowPrivate: boolean
  /** deliveries one node sends at the same time */
  concurrency: number
  /** how often a node looks for due deliveries without being woken */
  pollMs: number
  /** on PostgreSQL, a delivery thread ends after the database has held no webhook for this long */
  threadIdleMs: number
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const port = int(env, 'PORT', 8080, 0, 65_535)
  const databaseUrl = nonEmpty(env.DATABASE_URL)
  const workers = int(env, 'WORKERS', 1, 1, 64)
  if (workers > 1 && databaseUrl === undefined) {
    throw new ConfigError('WORKERS > 1 needs DATABASE_URL: the embedded database belongs to one process')
  }
  const baseUrl = optionalUrl(env, 'BASE_URL')
  const appUrl = optionalUrl(env, 'APP_URL')
  const serveApp = oneOf(env, 'SERVE_APP', ['on', 'off'] as const, 'on') === 'on'
  if (appUrl === undefined && !serveApp) {
    throw new ConfigError('SERVE_APP=off needs APP_URL: GET / would send browsers to /app/, which is then not served')
  }
  if (appUrl !== undefined && (new URL(appUrl).search !== '' || new URL(appUrl).hash !== '')) {
    throw new ConfigError('APP_URL must not have a query or fragment: "/" is appended to it')
  }
  // GET / answers 301 to {APP_URL}/: pointing it at our own root would loop (contract §8).
  const ownBase = baseUrl ?? (port === 0 ? undefined : `http://localhost:${port}`)
  if (appUrl !== undefined && ownBase !== undefined && isSameRoot(appUrl, ownBase)) {
    throw new ConfigError(`APP_URL (${appUrl}) must not be the service's own root (${ownBase}): GET / would redirect to itself`)
  }
  const databaseListenUrl = nonEmpty(env.DATABASE_LISTEN_URL)
  const databaseReadUrls = (env.DATABASE_READ_URL ?? '')
    // A comma starts a new URL only before "postgres://": a multi-host URL has commas of its own.
    .split(/,(?=\s*postgres(?:ql)?:\/\/)/).map((u) => u.trim()).filter((u) => u !== '')
  if (databaseUrl === undefined && (databaseListenUrl !== undefined || databaseReadUrls.length > 0)) {
    throw new ConfigError('DATABASE_LISTEN_URL and DATABASE_READ_URL need DATABASE_URL: the embedded database has no replicas nor pooler')
  }
  for (const [name, url] of [...databaseReadUrls.map((u) => ['DATABASE_READ_URL', u]), ['DATABASE_LISTEN_URL', databaseListenUrl]] as const) {
    if (url !== undefined && !/^postgres(ql)?:\/\//.test(url)) throw new ConfigError(`${name} must hold postgres:// URLs: ${name === 'DATABASE_READ_URL' ? 'one or more, comma-separated' : 'one'}`)
  }
  const metricsPort = nonEmpty(env.METRICS_PORT) === undefined ? undefined : int(env, 'METRICS_PORT', 0, 0, 65_535)
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError('METRICS_PORT must differ from PORT: metrics are never served on the public port')
  }
  return Object.freeze({
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    port,
    databaseUrl,
    databaseListenUrl,
    databaseReadUrls: Object.freeze(databaseReadUrls),
    databasePrepare: oneOf(env, 'DATABASE_PREPARE', ['on', 'off'] as const, 'on') === 'on',
    dataDir: resolve(nonEmpty(env.DATA_DIR) ?? './data'),
    baseUrl,
    appUrl,
    serveApp,
    sessionTtlSeconds: int(env, 'SESSION_TTL_SECONDS', 86_400, 1, 31_536_000),
    trustProxy: parseTrustProxy(env.TRUST_PROXY ?? ''),
    logLevel: oneOf(env, 'LOG_LEVEL', ['debug', 'info', 'warn', 'error'] as const, 'info'),
    accessLog: oneOf(env, 'ACCESS_LOG', ['all', 'api', 'off'] as const, 'all'),
    workers,
    cacheMaxBytes: int(env, 'CACHE_MAX_BYTES', 64 * 1024 * 1024, 0, 2 ** 40),
    negativeCacheMs: int(env, 'NEGATIVE_CACHE_MS', 5_000, 0, 60_000),
    visitFlushMs: int(env, 'VISIT_FLUSH_MS', 1_000, 10, 60_000),
    visitStats: oneOf(env, 'VISIT_STATS', ['on', 'off'] as const, 'on') === 'on',
    statsRetentionDays: int(env, 'STATS_RETENTION_DAYS', 400, 1, 36_500),
    conversionWindowDays: int(env, 'CONVERSION_WINDOW_DAYS', 30, 1, 365),
    geoDb: nonEmpty(env.GEO_DB),
    argon2: Object.freeze({
      memoryKiB: int(env, 'ARGON2_MEMORY_KIB', 19_456, ARGON2_BOUNDS.memoryKiB.min, ARGON2_BOUNDS.memoryKiB.max),
      iterations: int(env, 'ARGON2_ITERATIONS', 2, ARGON2_BOUNDS.iterations.min, ARGON2_BOUNDS.iterations.max),
    }),
    // Every core, shared by the processes of this node (docs/decisions.md: why not one fewer, nor a lower priority).
    kdfThreads: int(env, 'KDF_THREADS', Math.max(1, Math.floor(availableParallelism() / workers)), 1, 64),
    kdfIdleMs: int(env, 'KDF_IDLE_MS', 60_000, 100, 86_400_000),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    dbTimeoutMs: int(env, 'DB_TIMEOUT_MS', 5_000, 100, 60_000),
    cacheStaleMs: int(env, 'CACHE_STALE_MS', 30_000, 0, 3_600_000),
    sessionCacheMs: int(env, 'SESSION_CACHE_MS', 30_000, 0, 300_000),
    metricsPort,
    metricsHost: nonEmpty(env.METRICS_HOST) ?? '127.0.0.1',
    webhooks: Object.freeze({
      retrySeconds: Object.freeze(retrySchedule(env)),
      retentionDays: int(env, 'WEBHOOK_RETENTION_DAYS', 30, 1, 3_650),
      allowHttp: oneOf(env, 'WEBHOOK_ALLOW_HTTP', ['on', 'off'] as const, 'off') === 'on',
      allowPrivate: oneOf(env, 'WEBHOOK_ALLOW_PRIVATE', ['on', 'off'] as const, 'off') === 'on',
      concurrency: int(env, 'WEBHOOK_CONCURRENCY', 8, 1, 256),
      pollMs: int(env, 'WEBHOOK_POLL_MS', 5_000, 100, 600_000),
      threadIdleMs: int(env, 'WEBHOOK_THREAD_IDLE_MS', 60_000, 100, 86_400_000),
    }),
    blocklistSources: parseBlocklistSources(env.BLOCKLIST_SOURCES ?? ''),
    blocklistRefreshSeconds: int(env, 'BLOCKLIST_REFRESH_S', 3_600, 5, 604_800),
    linkCreatePerMinute: int(env, 'LINK_CREATE_PER_MINUTE', 30, 1, 100_000),
    linkCreateBurst: int(env, 'LINK_CREATE_BURST', 60, 1, 100_000),
    newAccountHours: int(env, 'NEW_ACCOUNT_HOURS', 0, 0, 8_760),
    reportsSuspendAfter: int(env, 'REPORTS_SUSPEND_AFTER', 0, 0, 1_000),
    linkChecks: Object.freeze({
      enabled: oneOf(env, 'LINK_CHECKS', ['on', 'off'] as const, 'on') === 'on',
      intervalSeconds: int(env, 'LINK_CHECK_INTERVAL_S', 21_600, 10, 31_536_000),
      perMinute: int(env, 'LINK_CHECKS_PER_MINUTE', 120, 1, 100_000),
      allowPrivate: oneOf(env, 'LINK_CHECK_ALLOW_PRIVATE', ['on', 'off'] as const, 'off') === 'on',
    }),
    trust: trustConfig(env),
  })
}

function trustConfig(env: Env): TrustConfig {
  const securityContact = nonEmpty(env.SECURITY_CONTACT)
  // RFC 9116 2.5.3: a URI; these are the schemes a reporter can act on.
  if (securityContact !== undefined && !/^(mailto:[^\s@]+@[^\s@]+|https:\/\/\S+|tel:\+?[0-9][0-9 ()-]*)$/i.test(securityContact)) {
    throw new ConfigError('SECURITY_CONTACT must be a mailto:, https:// or tel: URI (mailto:security@example.com)')
  }
  const securityPolicyUrl = optionalUrl(env, 'SECURITY_POLICY_URL')
  const securityLanguages = nonEmpty(env.SECURITY_LANGUAGES) ?? 'en'
  if (!/^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*(\s*,\s*[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*)*$/.test(securityLanguages)) {
    throw new ConfigError('SECURITY_LANGUAGES must be comma-separated language tags (en, de, pt-BR)')
  }
  return Object.freeze({
    securityContact,
    securityPolicyUrl,
    securityLanguages: securityLanguages.split(',').map((t) => t.trim()).join(', '),
    transparency: oneOf(env, 'TRANSPARENCY', ['on', 'off'] as const, 'on') === 'on',
    publicBlocklist: oneOf(env, 'PUBLIC_BLOCKLIST', ['on', 'off'] as const, 'off') === 'on',
  })
}

/** BASE_URL when set, else http://localhost:{port} with the port actually bound. */
export function baseUrlFor(config: Config, boundPort: number): string {
  return config.baseUrl ?? `http://localhost:${boundPort}`
}

/** APP_URL when set, else the app this service serves under its base URL. */
export function appUrlFor(config: Config, baseUrl: string): string {
  return config.appUrl ?? `${baseUrl}/app`
}

/** Same scheme, host and port (URL.origin normalises case and default ports), and path "/". */
function isSameRoot(a: string, b: string): boolean {
  const [x, y] = [new URL(a), new URL(b)]
  return x.origin === y.origin && x.pathname === '/' && y.pathname === '/'
}

/** "10.0.0.1, 10.1.0.0/16, ::1" → a BlockList; undefined when empty. */
export function parseTrustProxy(value: string): BlockList | undefined {
  const items = value.split(',').map((s) => s.trim()).filter((s) => s !== '')
  if (items.length === 0) return undefined
  const list = new BlockList()
  for (const item of items) {
    const [address = '', bits] = item.split('/')
    const family = isIP(address)
    if (family === 0) throw new ConfigError(`TRUST_PROXY: "${item}" is not an IP address or CIDR`)
    const type = family === 4 ? 'ipv4' : 'ipv6'
    if (bits === undefined) {
      list.addAddress(address, type)
      continue
    }
    const prefix = Number(bits)
    if (!/^\d+$/.test(bits) || prefix > (family === 4 ? 32 : 128)) {
      throw new ConfigError(`TRUST_PROXY: "${item}" has an invalid prefix length`)
    }
    list.addSubnet(address, prefix, type)
  }
  return list
}

/** About 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (Standard Webhooks' suggestion): some 27.5 h in all. */
const DEFAULT_RETRY_SECONDS = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]

/** WEBHOOK_RETRY_SCHEDULE: seconds before each retry, comma-separated ("1,2,4"). */
function retrySchedule(env: Env): number[] {
  const raw = nonEmpty(env.WEBHOOK_RETRY_SCHEDULE)
  if (raw === undefined) return DEFAULT_RETRY_SECONDS
  const parts = raw.split(',').map((s) => s.trim())
  if (parts.length > 20 || !parts.every((p) => /^\d+$/.test(p) && Number(p) >= 1 && Number(p) <= 86_400)) {
    throw new ConfigError('WEBHOOK_RETRY_SCHEDULE must be 1 to 20 comma-separated whole seconds, each from 1 to 86400')
  }
  return parts.map(Number)
}

/**
 * "https://feed.example/hosts.txt, /etc/link-service/phishing.txt" → the feeds, each named as
 * written (the name `block list` shows), a file's location resolved against the working directory.
 */
export function parseBlocklistSources(value: string): Array<{ name: string; location: string }> {
  const names = value.split(',').map((s) => s.trim()).filter((s) => s !== '')
  const sources = names.map((name) => {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(name)) {
      let url: URL | undefined
      try {
        url = new URL(name)
      } catch {}
      if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
        throw new ConfigError(`BLOCKLIST_SOURCES: "${name}" is neither an http(s) URL nor a file`)
      }
      return { name, location: name }
    }
    if (name === 'manual') throw new ConfigError('BLOCKLIST_SOURCES: "manual" names the operator\'s own entries; give a path such as ./manual')
    return { name, location: resolve(name) }
  })
  if (new Set(names).size !== names.length) throw new ConfigError('BLOCKLIST_SOURCES lists a source twice')
  return sources
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name])
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}`)
  }
  return value
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = nonEmpty(env[name])
  if (raw === undefined) return fallback
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}`)
  return raw as T
}

/** An absolute http(s) URL without a trailing slash, so "{url}/r/..." never doubles it. */
function optionalUrl(env: Env, name: string): string | undefined {
  const raw = nonEmpty(env[name])
  if (raw === undefined) return undefined
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be an absolute http or https URL`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an absolute http or https URL`)
  }
  return raw.replace(/\/+$/, '')
}
