// Unit tests of CORS headers (src/http/cors.ts), configuration (src/config.ts) and the request
// target → path reduction (src/app.ts pathOf).
import type { IncomingMessage } from 'node:http'
import { availableParallelism } from 'node:os'
import { resolve } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { pathOf } from '../../src/app.js'
import { appUrlFor, baseUrlFor, ConfigError, loadConfig, parseTrustProxy } from '../../src/config.js'
import { addCorsHeaders, isPreflight, preflightHeaders } from '../../src/http/cors.js'

function names(list: string | undefined): string[] {
  return (list ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '')
}

function throwsConfig(fn: () => unknown, message: RegExp): void {
  let err: unknown
  try {
    fn()
  } catch (e) {
    err = e
  }
  assert.instance(err, ConfigError)
  assert.ok(message.test((err as Error).message), (err as Error).message)
}

// ---------------------------------------------------------------------------------------------
const cors = suite('cors')

const req = (method: string, headers: Record<string, string>) => ({ method, headers }) as unknown as IncomingMessage

// contract §6: a preflight is OPTIONS with Access-Control-Request-Method
cors('isPreflight needs both OPTIONS and Access-Control-Request-Method', () => {
  assert.is(isPreflight(req('OPTIONS', { 'access-control-request-method': 'POST' })), true)
  assert.is(isPreflight(req('OPTIONS', {})), false)
  assert.is(isPreflight(req('OPTIONS', { origin: 'https://a.example' })), false)
  assert.is(isPreflight(req('GET', { 'access-control-request-method': 'POST' })), false)
})

// contract §6: Allow-Origin *, Expose-Headers naming the five headers, never Allow-Credentials
cors('addCorsHeaders sets Allow-Origin * and exposes the five headers, without credentials', () => {
  const h: Record<string, string> = { 'x-request-id': 'abc' }
  addCorsHeaders(h)
  assert.is(h['access-control-allow-origin'], '*')
  assert.equal(names(h['access-control-expose-headers']).sort(), [
    'location',
    'retry-after',
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-request-id',
  ])
  assert.is(h['access-control-allow-credentials'], undefined)
  assert.is(h['x-request-id'], 'abc', 'existing headers are kept')
})

// contract §6: preflight → allowed methods, Allow-Headers naming Authorization, Content-Type, X-Request-Id, Max-Age
cors('preflightHeaders name the methods, the three request headers and a max age', () => {
  const h = preflightHeaders()
  assert.is(h['access-control-allow-origin'], '*')
  const methods = names(h['access-control-allow-methods'])
  for (const m of ['get', 'head', 'post', 'patch', 'delete']) assert.ok(methods.includes(m), m)
  const allowed = names(h['access-control-allow-headers'])
  for (const name of ['authorization', 'content-type', 'x-request-id']) assert.ok(allowed.includes(name), name)
  assert.ok(/^[1-9]\d*$/.test(h['access-control-max-age'] ?? ''), h['access-control-max-age'])
  assert.is(h['access-control-allow-credentials'], undefined)
})

cors.run()

// ---------------------------------------------------------------------------------------------
const config = suite('config')

// contract §8: every variable optional, with the documented defaults
config('loadConfig({}) gives the documented defaults', () => {
  const c = loadConfig({})
  assert.is(c.host, '127.0.0.1')
  assert.is(c.port, 8080)
  assert.is(c.databaseUrl, undefined)
  assert.is(c.dataDir, resolve('./data'))
  assert.is(c.baseUrl, undefined)
  assert.is(c.appUrl, undefined)
  assert.is(c.serveApp, true)
  assert.is(c.sessionTtlSeconds, 86_400)
  assert.is(c.trustProxy, undefined)
  assert.is(c.logLevel, 'info')
})

// contract §8: all variables optional — an empty value is treated as unset, giving the default
config('blank values count as unset', () => {
  const c = loadConfig({ HOST: '  ', PORT: '', LOG_LEVEL: ' ', DATABASE_URL: '', TRUST_PROXY: ' , ' })
  assert.is(c.host, '127.0.0.1')
  assert.is(c.port, 8080)
  assert.is(c.logLevel, 'info')
  assert.is(c.databaseUrl, undefined)
  assert.is(c.trustProxy, undefined)
})

// STYLE (config): parse once, typed and frozen
config('the result is frozen', () => {
  const c = loadConfig({})
  assert.ok(Object.isFrozen(c))
})

// contract §8: HOST, PORT, DATABASE_URL, DATA_DIR, BASE_URL, APP_URL, SESSION_TTL_SECONDS, LOG_LEVEL; §5: no doubled slash
config('explicit values are read and typed', () => {
  const c = loadConfig({
    HOST: '0.0.0.0',
    PORT: '0',
    DATABASE_URL: 'postgres://u@db:5432/x',
    DATA_DIR: '/tmp/ls-data',
    BASE_URL: 'https://sho.rt/',
    APP_URL: 'https://app.example.org//',
    SESSION_TTL_SECONDS: '60',
    LOG_LEVEL: 'debug',
  })
  assert.is(c.host, '0.0.0.0')
  assert.is(c.port, 0)
  assert.is(c.databaseUrl, 'postgres://u@db:5432/x')
  assert.is(c.dataDir, '/tmp/ls-data')
  assert.is(c.baseUrl, 'https://sho.rt', 'no trailing slash, so "{BASE_URL}/r/..." is never doubled')
  assert.is(c.appUrl, 'https://app.example.org', 'no trailing slash, so "/" redirects to "{APP_URL}/"')
  assert.is(c.sessionTtlSeconds, 60)
  assert.is(c.logLevel, 'debug')
})

// contract §8: PORT is a port to listen on (0 picks a free one)
config('PORT must be an integer from 0 to 65535', () => {
  for (const port of ['abc', '-1', '65536', '1.5', '80x', '1e3']) throwsConfig(() => loadConfig({ PORT: port }), /PORT/)
  assert.is(loadConfig({ PORT: '65535' }).port, 65_535)
})

// contract §8: SESSION_TTL_SECONDS is the lifetime of new sessions (a positive number of seconds)
config('SESSION_TTL_SECONDS must be a positive integer', () => {
  for (const v of ['0', '-5', 'day', '1.5']) throwsConfig(() => loadConfig({ SESSION_TTL_SECONDS: v }), /SESSION_TTL_SECONDS/)
})

// The argon2id cost (memory in KiB, iterations) and the KDF threads are configurable and validated
config('ARGON2_MEMORY_KIB, ARGON2_ITERATIONS and KDF_THREADS: defaults, ranges, typed', () => {
  const d = loadConfig({})
  assert.equal(d.argon2, { memoryKiB: 19_456, iterations: 2 }, "OWASP's first argon2id setting")
  assert.ok(Object.isFrozen(d.argon2))
  assert.is(d.kdfThreads, availableParallelism())
  const c = loadConfig({ ARGON2_MEMORY_KIB: '65536', ARGON2_ITERATIONS: '3', KDF_THREADS: '4' })
  assert.equal(c.argon2, { memoryKiB: 65_536, iterations: 3 })
  assert.is(c.kdfThreads, 4)
  for (const v of ['7', '1048577', '19 MiB', '-1', '1.5']) throwsConfig(() => loadConfig({ ARGON2_MEMORY_KIB: v }), /ARGON2_MEMORY_KIB/)
  for (const v of ['0', '65', 'two']) throwsConfig(() => loadConfig({ ARGON2_ITERATIONS: v }), /ARGON2_ITERATIONS/)
  for (const v of ['0', '65', 'all']) throwsConfig(() => loadConfig({ KDF_THREADS: v }), /KDF_THREADS/)
})

// Issue 22: idle threads stop after a quiet minute; tests shorten it
config('KDF_IDLE_MS: a minute by default, from 100 ms to a day', () => {
  assert.is(loadConfig({}).kdfIdleMs, 60_000)
  assert.is(loadConfig({ KDF_IDLE_MS: '100' }).kdfIdleMs, 100)
  for (const v of ['99', '86400001', '1m']) throwsConfig(() => loadConfig({ KDF_IDLE_MS: v }), /KDF_IDLE_MS/)
})

config('WEBHOOK_THREAD_IDLE_MS: a minute by default, from 100 ms to a day', () => {
  assert.is(loadConfig({}).webhooks.threadIdleMs, 60_000)
  assert.is(loadConfig({ WEBHOOK_THREAD_IDLE_MS: '100' }).webhooks.threadIdleMs, 100)
  for (const v of ['99', '86400001', '1m']) throwsConfig(() => loadConfig({ WEBHOOK_THREAD_IDLE_MS: v }), /WEBHOOK_THREAD_IDLE_MS/)
})

// The pool is sized to the machine, shared by the processes of one node
config('KDF_THREADS defaults to the cores divided among WORKERS, at least 1', () => {
  const cores = availableParallelism()
  const url = { DATABASE_URL: 'postgres://u@db/x' }
  assert.is(loadConfig({ ...url, WORKERS: '2' }).kdfThreads, Math.max(1, Math.floor(cores / 2)))
  assert.is(loadConfig({ ...url, WORKERS: '64' }).kdfThreads, 1)
})

// contract §8: LOG_LEVEL is debug, info, warn or error
config('LOG_LEVEL must be one of debug, info, warn, error', () => {
  for (const level of ['debug', 'info', 'warn', 'error'] as const) assert.is(loadConfig({ LOG_LEVEL: level }).logLevel, level)
  for (const v of ['verbose', 'INFO', 'trace']) throwsConfig(() => loadConfig({ LOG_LEVEL: v }), /LOG_LEVEL/)
})

// contract §4/§5: short_url is {BASE_URL}/r/{code} and / redirects to {APP_URL}/ — both must be absolute http(s)
config('BASE_URL and APP_URL must be absolute http(s) URLs', () => {
  for (const name of ['BASE_URL', 'APP_URL']) {
    for (const v of ['not a url', '/relative', 'ftp://example.com', 'javascript:alert(1)']) {
      throwsConfig(() => loadConfig({ [name]: v }), new RegExp(name))
    }
  }
})

// contract §8: APP_URL is "never the service's own /"
config('APP_URL equal to BASE_URL is refused', () => {
  throwsConfig(() => loadConfig({ BASE_URL: 'https://sho.rt', APP_URL: 'https://sho.rt/' }), /APP_URL/)
})

// contract §8: APP_URL is "never the service's own /", however it is spelled, and also when
// BASE_URL is left to its default http://localhost:{PORT}
config('APP_URL naming our own root is refused in any spelling, and with the default BASE_URL', () => {
  throwsConfig(() => loadConfig({ BASE_URL: 'https://Sho.rt:443', APP_URL: 'https://sho.rt' }), /APP_URL/)
  throwsConfig(() => loadConfig({ PORT: '9000', APP_URL: 'http://LOCALHOST:9000/' }), /APP_URL/)
  assert.is(loadConfig({ BASE_URL: 'https://sho.rt', APP_URL: 'https://sho.rt/app' }).appUrl, 'https://sho.rt/app')
})

// With APP_URL unset, GET / brings a browser to the app this service serves
config('APP_URL defaults to {BASE_URL}/app, on any port', () => {
  assert.is(appUrlFor(loadConfig({ PORT: '3000' }), 'http://localhost:3000'), 'http://localhost:3000/app')
  assert.is(appUrlFor(loadConfig({ BASE_URL: 'https://sho.rt/' }), 'https://sho.rt'), 'https://sho.rt/app')
  assert.is(appUrlFor(loadConfig({ APP_URL: 'https://app.example/' }), 'https://sho.rt'), 'https://app.example')
})

// The app is served unless turned off, and then / must be told where the app is
config('SERVE_APP is on or off, and off needs APP_URL', () => {
  assert.is(loadConfig({ SERVE_APP: 'off', APP_URL: 'https://app.example' }).serveApp, false)
  assert.is(loadConfig({ SERVE_APP: 'on', APP_URL: 'https://app.example' }).serveApp, true)
  throwsConfig(() => loadConfig({ SERVE_APP: 'off' }), /SERVE_APP=off needs APP_URL/)
  throwsConfig(() => loadConfig({ SERVE_APP: 'no' }), /SERVE_APP/)
})

// contract §5: / → 301 to {APP_URL}/ — a query or fragment would end up before that "/"
config('APP_URL with a query or fragment is refused', () => {
  throwsConfig(() => loadConfig({ APP_URL: 'https://app.example/?a=1' }), /APP_URL/)
  throwsConfig(() => loadConfig({ APP_URL: 'https://app.example/#x' }), /APP_URL/)
})

// contract §8: BASE_URL defaults to http://localhost:{PORT}
config('baseUrlFor uses BASE_URL, else http://localhost:{bound port}', () => {
  assert.is(baseUrlFor(loadConfig({}), 4321), 'http://localhost:4321')
  assert.is(baseUrlFor(loadConfig({ BASE_URL: 'https://sho.rt/' }), 4321), 'https://sho.rt')
})

// contract §8: TRUST_PROXY is comma-separated proxy addresses/CIDRs
config('parseTrustProxy: empty means none', () => {
  assert.is(parseTrustProxy(''), undefined)
  assert.is(parseTrustProxy(' ,, '), undefined)
})

// contract §7/§8: TRUST_PROXY lists proxy addresses/CIDRs (IPv4 and IPv6)
config('parseTrustProxy: addresses and CIDRs of both families', () => {
  const list = parseTrustProxy(' 10.0.0.1 , 192.168.0.0/16,::1, fd00::/8')
  assert.ok(list !== undefined)
  assert.ok(list.check('10.0.0.1', 'ipv4'))
  assert.not.ok(list.check('10.0.0.2', 'ipv4'))
  assert.ok(list.check('192.168.200.7', 'ipv4'))
  assert.not.ok(list.check('192.169.0.1', 'ipv4'))
  assert.ok(list.check('::1', 'ipv6'))
  assert.ok(list.check('fd12::5', 'ipv6'))
  assert.not.ok(list.check('fe80::1', 'ipv6'))
})

// contract §8: configuration is validated at start; a bad TRUST_PROXY entry is refused, not ignored
config('parseTrustProxy: a non-address or a bad prefix is a ConfigError naming TRUST_PROXY', () => {
  for (const v of ['localhost', '10.0.0', '10.0.0.0/33', '10.0.0.0/x', '10.0.0.0/', '::/129', '10.0.0.1/-1', '10.0.0.1, nope']) {
    throwsConfig(() => parseTrustProxy(v), /TRUST_PROXY/)
  }
  throwsConfig(() => loadConfig({ TRUST_PROXY: 'nope' }), /TRUST_PROXY/)
  assert.ok(parseTrustProxy('0.0.0.0/0') !== undefined)
  assert.ok(parseTrustProxy('::/128') !== undefined)
})

config.run()

// ---------------------------------------------------------------------------------------------
const path = suite('pathOf')

// contract §2: a query string does not change routing
path('origin-form: the part before "?"', () => {
  assert.is(pathOf('/api/v1/links'), '/api/v1/links')
  assert.is(pathOf('/api/v1/links?x=1&y=/z'), '/api/v1/links')
  assert.is(pathOf('/?'), '/')
  assert.is(pathOf('/api/v1/users/?a'), '/api/v1/users/')
})

// RFC 9112 3.2.2: a server must accept absolute-form request targets
path('absolute-form: reduced to its path, "/" when there is none', () => {
  assert.is(pathOf('http://example.com/api/v1/links?x=1'), '/api/v1/links')
  assert.is(pathOf('HTTPS://Example.com:8443/r/aZ3kP9qR'), '/r/aZ3kP9qR')
  assert.is(pathOf('http://example.com'), '/')
  assert.is(pathOf('http://example.com?x=/api'), '/')
  assert.is(pathOf('http://[::1]:8080/healthz'), '/healthz')
})

// contract §2: 404 for no such path — a target that is neither origin- nor http(s) absolute-form matches nothing
path('anything else is returned as is, and so matches no route', () => {
  assert.is(pathOf('*'), '*')
  assert.is(pathOf('example.com:443'), 'example.com:443')
  assert.is(pathOf('ftp://example.com/x'), 'ftp://example.com/x')
  assert.is(pathOf('api/v1/links'), 'api/v1/links')
})

path.run()
