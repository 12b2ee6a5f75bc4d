// `npm run bench` (via scripts/bench.sh): the redirect benchmark, every figure next to a ceiling
// measured in the same run, interleaved round by round, median of BENCH_ROUNDS rounds.
// See docs/performance.md (which this writes) for what each figure measures.
import { execFileSync, spawnSync } from 'node:child_process'
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { codeFor, databaseVersion, prepareDatabase, seedLarge, seedSmall, totalVisits, urlFor } from './db.mjs'
import {
  BENCH_DIR,
  ROOT,
  freePort,
  killAllNow,
  median,
  runNodeJson,
  runWrk,
  sleep,
  spawnTracked,
  startLogged,
  stopAll,
  stopChild,
  treeCpuSeconds,
  treeMemory,
} from './lib.mjs'
import { misses, renderDoc, renderTable } from './report.mjs'

const say = (line = '') => process.stdout.write(line + '\n')

// ---------------------------------------------------------------------------------------------
// Options

function intOption(name, fallback, lo, hi) {
  const raw = process.env[name]?.trim()
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!/^\d+$/.test(raw) || n < lo || n > hi) {
    process.stderr.write(`${name} must be an integer from ${lo} to ${hi}\n`)
    process.exit(2)
  }
  return n
}

const SECONDS = intOption('BENCH_SECONDS', 10, 1, 15)
const ROUNDS = intOption('BENCH_ROUNDS', 3, 1, 9)
const LARGE = process.env.BENCH_LARGE === '1'
const KEEP = process.env.BENCH_KEEP === '1'
const WARM_SECONDS = Math.min(3, SECONDS)
const DEV_RUN = SECONDS < 10 || ROUNDS < 3

const C_THROUGHPUT = 64 // connections for throughput points
const C_LIGHT = 8 // connections for latency points
const C_API = 16 // create and list
const C_LOGIN = 8 // login: twice the libuv pool, so the pool never idles
const STORM = 20 // concurrent logins in the storm
const OWNERS = 20 // x 50 links = the 1k set
const LARGE_TOTAL = 1_000_000
const SMALL_CACHE_BYTES = 1024 * 1024 // for the 1M set: holds a small fraction of it
const PASSWORD = 'bench-password-1'

const { loadConfig } = await import(pathToFileURL(join(ROOT, 'dist', 'config.js')).href)
const { Passwords } = await import(pathToFileURL(join(ROOT, 'dist', 'passwords', 'passwords.js')).href)
const DEFAULTS = loadConfig({})
// The service as it ships: ACCESS_LOG defaults to the service's own default (a line per request).
const ACCESS_LOG = process.env.BENCH_ACCESS_LOG?.trim() || DEFAULTS.accessLog
// The password hash as it ships too: argon2id at the service's default cost, on its default threads.
const ARGON2 = {
  memoryKiB: intOption('BENCH_ARGON2_MEMORY_KIB', DEFAULTS.argon2.memoryKiB, 8, 1_048_576),
  iterations: intOption('BENCH_ARGON2_ITERATIONS', DEFAULTS.argon2.iterations, 1, 64),
}
const KDF_THREADS = DEFAULTS.kdfThreads
// Only the login points (the KDF ceiling, logins, the storm and the burst): a quick look at the
// password path; the table is printed and docs/performance.md is left alone.
const LOGINS_ONLY = process.env.BENCH_ONLY === 'logins'
if (process.env.BENCH_ONLY !== undefined && !LOGINS_ONLY) {
  process.stderr.write('BENCH_ONLY may only be "logins"\n')
  process.exit(2)
}
const BURST = 60 // simultaneous logins from as many addresses, half of them unknown usernames
// Enough accounts that the create-link point never meets the 50-links cap: 8,000 creations/s,
// for every round and the warm-up.
const CREATORS = Math.ceil((8_000 * SECONDS * (ROUNDS + 1)) / 50)

// ---------------------------------------------------------------------------------------------
// Lifecycle: everything we start is killed on the way out, however we leave.

const tmp = mkdtempSync(join(os.tmpdir(), 'link-bench-'))
let database
let finished = false

let cleaning
function cleanup() {
  cleaning ??= (async () => {
    await stopAll()
    if (database !== undefined) {
      try {
        await database.cleanup()
      } catch (err) {
        say(`could not drop the bench database: ${err.message}`)
      }
    }
    if (KEEP) say(`work directory kept: ${tmp}`)
    else if (finished || interrupted) rmSync(tmp, { recursive: true, force: true })
    else {
      // A failure: keep the logs to read, not the bulky data.
      for (const f of readdirSync(tmp)) if (!f.endsWith('.log') && f !== 'nginx') rmSync(join(tmp, f), { recursive: true, force: true })
      say(`logs kept in ${tmp}`)
    }
  })()
  return cleaning
}

process.on('exit', killAllNow)
let interrupted = false
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    // npm passes the terminal's Ctrl-C on as well: a repeat while cleaning up is ignored, and
    // the cleanup is given 30 s at most (the 'exit' hook still kills every child).
    if (interrupted) return
    interrupted = true
    say(`\n${signal}: stopping every process the bench started...`)
    setTimeout(() => process.exit(130), 30_000).unref()
    cleanup().finally(() => process.exit(130))
  })
}

// ---------------------------------------------------------------------------------------------
// Processes under test

const CONFIG_KEYS = [
  'HOST', 'PORT', 'DATABASE_URL', 'DATA_DIR', 'BASE_URL', 'APP_URL', 'SESSION_TTL_SECONDS', 'TRUST_PROXY', 'LOG_LEVEL',
  'ACCESS_LOG', 'WORKERS', 'CACHE_MAX_BYTES', 'NEGATIVE_CACHE_MS', 'VISIT_FLUSH_MS', 'VISIT_STATS', 'STATS_RETENTION_DAYS',
  'ARGON2_MEMORY_KIB', 'ARGON2_ITERATIONS', 'KDF_THREADS', 'SHUTDOWN_TIMEOUT_MS', 'DB_TIMEOUT_MS', 'CACHE_STALE_MS', 'NODE_OPTIONS', 'UV_THREADPOOL_SIZE',
]
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !CONFIG_KEYS.includes(k) && !k.startsWith('BENCH_')))

let serviceCount = 0
async function startService(name, extra = {}) {
  const port = await freePort()
  const workers = Number(extra.WORKERS ?? 1)
  const env = {
    ...cleanEnv,
    ...database.serviceEnv,
    HOST: '127.0.0.1',
    PORT: String(port),
    ACCESS_LOG,
    TRUST_PROXY: '127.0.0.1',
    ARGON2_MEMORY_KIB: String(ARGON2.memoryKiB),
    ARGON2_ITERATIONS: String(ARGON2.iterations),
    ...extra,
  }
  const logFile = join(tmp, `service-${++serviceCount}-${name}.log`)
  const { child } = await startLogged(name, process.execPath, ['dist/server.js'], { env, logFile, count: workers })
  return { name, child, pid: child.pid, url: `http://127.0.0.1:${port}`, logFile, workers }
}

async function stopService(svc) {
  const { code, signal } = await stopChild(svc.child)
  if (code !== 0) say(`  warning: ${svc.name} exited with ${code ?? signal}; log: ${svc.logFile}`)
}

async function startCeiling(name, linksFile, workers) {
  const port = await freePort()
  const env = { ...cleanEnv, CEILING_PORT: String(port), CEILING_LINKS: linksFile, CEILING_WORKERS: String(workers) }
  const logFile = join(tmp, `ceiling-${name}.log`)
  const { child } = await startLogged(name, process.execPath, [join(BENCH_DIR, 'ceiling.mjs')], { env, logFile })
  return { name, child, pid: child.pid, url: `http://127.0.0.1:${port}` }
}

function nginxPresent() {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

async function startNginx(links, probeCode) {
  const port = await freePort()
  const prefix = join(tmp, 'nginx')
  mkdirSync(join(prefix, 'logs'), { recursive: true })
  const quote = (s) => `"${s.replace(/["\\$]/g, '')}"`
  const map = links.map(([code, location]) => `    /r/${code} ${quote(location)};`).join('\n')
  const conf = `# written by scripts/bench/run.mjs: the nginx ceiling (return 302 from a map)
worker_processes 1;
daemon off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  map_hash_max_size 2097152;
  map_hash_bucket_size 128;
  map $uri $bench_location {
    default "";
${map}
  }
  server {
    listen 127.0.0.1:${port};
    location /r/ {
      if ($bench_location = "") { return 404 '{"code":"LINK_NOT_FOUND","message":"no such link"}'; }
      add_header cache-control no-store;
      return 302 $bench_location;
    }
  }
}
`
  const confFile = join(prefix, 'nginx.conf')
  writeFileSync(confFile, conf)
  const fd = openSync(join(prefix, 'logs', 'stderr.log'), 'a')
  const child = spawnTracked('nginx', ['-p', prefix, '-c', confFile, '-e', join(prefix, 'logs', 'error.log')], {
    cwd: prefix,
    stdio: ['ignore', fd, fd],
  })
  closeSync(fd)
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 10_000
  let exited = false
  child.exited.then(() => (exited = true))
  for (;;) {
    try {
      const res = await fetch(`${url}/r/${probeCode}`, { redirect: 'manual' })
      await res.arrayBuffer()
      if (res.status === 302) return { name: 'nginx', child, pid: child.pid, url }
    } catch {
      /* not yet */
    }
    if (exited || Date.now() > deadline) {
      await stopChild(child, 1_000)
      let log = ''
      try {
        log = readFileSync(join(prefix, 'logs', 'error.log'), 'utf8').slice(-1500)
      } catch {}
      throw new Error(`nginx did not start:\n${log}`)
    }
    await sleep(100)
  }
}

// ---------------------------------------------------------------------------------------------
// Points and groups. A group's entries run back to back in every round, the order reversed
// every other round so that a drift in the machine's speed favours no entry. A ratio is taken
// within a round, between two entries that ran side by side.

/** A wrk point: redirect-walk or API mode against target.url. */
function wrkEntry(key, label, target, { connections, args, warm = true, timeout }) {
  return {
    key,
    label,
    warm,
    run: (round, seconds) =>
      runWrk({ url: target.url, connections, seconds, timeout, args: typeof args === 'function' ? args(round) : args }),
  }
}

const redirectArgs = (file, stride = 0, starts = (r) => (r * 137) % 1000) => (round) => [
  'redirect',
  file,
  String(starts(round)),
  String(stride),
]

const results = {} // key -> [result per round]
const servedRedirects = { total: 0 } // 302s wrk counted against the service (checked against visits)

function describeResult(r) {
  const parts = [`${Math.round(r.rps).toLocaleString('en-US')} req/s`, `p50 ${(r.p50_us / 1000).toFixed(2)} ms`, `p99 ${(r.p99_us / 1000).toFixed(2)} ms`]
  if (r.status_errors) parts.push(`${r.status_errors} status>399`)
  if (r.socket_errors) parts.push(`${r.socket_errors} socket errors/timeouts`)
  if (r.storm) parts.push(`storm ${r.storm.rps.toFixed(1)} logins/s`)
  if (r.burst) parts.push(`burst: ${Object.entries(r.burst.statuses).map(([s, n]) => `${n} × ${s}`).join(', ')}, slowest ${(r.burst.slowestMs / 1000).toFixed(1)} s`, `slowest redirect ${(r.max_us / 1000).toFixed(1)} ms`)
  return parts.join(', ')
}

async function group(name, entries) {
  say(`\n== ${name}`)
  for (const e of entries.filter((x) => x.warm)) {
    const r = await e.run(ROUNDS, WARM_SECONDS) // round index ROUNDS: offsets unlike any measured round
    if (e.countsRedirects) servedRedirects.total += r.requests
    say(`  warm-up ${e.label}: ${describeResult(r)}`)
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? entries : [...entries].reverse()
    for (const e of order) {
      const r = await e.run(round, SECONDS)
      if (e.countsRedirects) servedRedirects.total += r.requests
      ;(results[e.key] ??= [])[round] = r
      say(`  round ${round + 1}/${ROUNDS} ${e.label}: ${describeResult(r)}`)
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Rows of the table

const rows = []
const memory = []

const values = (key, pick) => (results[key] ?? []).map(pick)
const perRound = (a, b, pickA, pickB = pickA) =>
  (results[a] ?? []).map((ra, i) => pickA(ra) / pickB(results[b][i]))
const rps = (r) => r.rps
/** A row of per-round ratios a ÷ b (same round), met when their median is at least `min`. */
const ratioRow = (section, figure, ratios, min, target, notes = []) =>
  rows.push({ section, figure, unit: 'ratio', values: ratios, target, met: median(ratios) >= min, notes })
const p50 = (r) => r.p50_us
const p99 = (r) => r.p99_us

function errorsOf(key, expectStatusErrors = false) {
  let status = 0
  let socket = 0
  let requests = 0
  for (const r of results[key] ?? []) {
    requests += r.requests
    status += expectStatusErrors ? r.requests - r.status_errors : r.status_errors
    socket += r.socket_errors
  }
  const notes = []
  if (status) notes.push(`${status} of ${requests} answers had an unexpected status`)
  if (socket) notes.push(`${socket} socket errors or timeouts`)
  return notes
}

function row(section, figure, unit, key, pick, { ceilingKey, ceilingPick = pick, target, notes = [], expect404 = false } = {}) {
  if (results[key] === undefined) return
  const vs = values(key, pick)
  const out = { section, figure, unit, values: vs, notes: [...notes, ...errorsOf(key, expect404)] }
  if (ceilingKey !== undefined) {
    out.ceiling = values(ceilingKey, ceilingPick)
    out.ratios = perRound(key, ceilingKey, pick, ceilingPick)
    out.ratioKind = unit === 'us' ? 'latency' : 'throughput'
  }
  if (target !== undefined) Object.assign(out, target(out))
  rows.push(out)
  return out
}

const atLeast = (limit, text) => (r) => ({ target: text, met: median(r.ratios) >= limit })
const below = (limitUs, text) => (r) => ({ target: text, met: median(r.values) < limitUs })

// ---------------------------------------------------------------------------------------------

async function main() {
  const started = new Date()
  const load0 = os.loadavg()
  say(`npm run bench: ${SECONDS} s per point, ${ROUNDS} round(s), ${LARGE ? 'with' : 'without'} the 1M-link set${DEV_RUN ? ' (development run: too short to quote)' : ''}`)
  say(`work directory: ${tmp}`)
  const dataDir = join(tmp, 'data')
  database = await prepareDatabase({ env: process.env, dataDir, say })
  const hasNginx = nginxPresent()
  if (!hasNginx) say('nginx not found: its ceiling is skipped (apt-get install nginx-light)')

  // 1. Migrate: run the service once on the empty database, so the schema is the service's own.
  say('\n== preparing')
  const migrator = await startService('migrate')
  await stopService(migrator)

  // 2. The 1k set, straight into the tables.
  const hasher = new Passwords(ARGON2, 1)
  const passwordHash = await hasher.hash(PASSWORD)
  await hasher.close()
  let db = await database.open()
  const dbVersion = await databaseVersion(db)
  const small = await seedSmall(db, { owners: OWNERS, creators: CREATORS, passwordHash })
  const visitsBefore = await totalVisits(db)
  await db.close()
  say(`seeded ${small.links.length} links for ${OWNERS} accounts, ${CREATORS} empty accounts for link creation, a session each (argon2id m=${ARGON2.memoryKiB} KiB, t=${ARGON2.iterations})`)

  const linksFile = join(tmp, 'links-1k.tsv')
  const smallLinks = small.links.map((i) => [codeFor(i), urlFor(i)])
  writeFileSync(linksFile, smallLinks.map(([c, u]) => `${c}\t${u}\n`).join(''))
  const unknownFile = join(tmp, 'unknown-1k.tsv')
  writeFileSync(unknownFile, small.unknown.map((i) => `${codeFor(i)}\n`).join(''))
  const ownerTokens = join(tmp, 'owner-tokens.txt')
  writeFileSync(ownerTokens, small.ownerTokens.join('\n') + '\n')
  const creatorTokens = join(tmp, 'creator-tokens.txt')
  writeFileSync(creatorTokens, small.creatorTokens.join('\n') + '\n')

  // The password KDF, one hash alone: the figures behind the choice of argon2id (decisions.md).
  say('\n== one password hash, median of 5: scrypt (node:crypto) and argon2id (@noble/hashes)')
  const kdf = await runNodeJson(join(BENCH_DIR, 'kdf-compare.mjs'), [ARGON2.memoryKiB, ARGON2.iterations].map(String))
  results.kdf = [kdf]
  say(`  scrypt N=2^16 ${(kdf.scrypt16_us / 1000).toFixed(0)} ms, scrypt N=2^17 ${(kdf.scrypt17_us / 1000).toFixed(0)} ms, argon2id ${(kdf.argon2id_us / 1000).toFixed(0)} ms`)

  // 3. Ceilings.
  const node1 = await startCeiling('node-1', linksFile, 1)
  let nginx
  if (hasNginx) {
    try {
      nginx = await startNginx(smallLinks, smallLinks[0][0])
    } catch (err) {
      say(`nginx ceiling skipped: ${err.message}`)
    }
  }
  const hot = redirectArgs(linksFile)
  const ceilingEntry = (key, target, label) =>
    wrkEntry(key, label, target, { connections: C_THROUGHPUT, args: hot })
  if (nginx !== undefined && !LOGINS_ONLY) {
    await group('ceilings: nginx and node:http, 1 process each, 64 connections', [
      ceilingEntry('nginx', nginx, 'nginx return 302'),
      ceilingEntry('ceil_node1_vs_nginx', node1, 'node:http ceiling'),
    ])
    await stopChild(nginx.child)
  }

  // 4. One worker on the 1k set.
  const s1 = await startService('1-worker')
  await sleep(1_000)
  const s1Idle = treeMemory(s1.pid)
  await sanityChecks(s1, smallLinks, small.unknown.map(codeFor))
  if (!LOGINS_ONLY) {
    const svcHot = { ...wrkEntry('hot1', 'hot redirect, 1 worker', s1, { connections: C_THROUGHPUT, args: hot }), countsRedirects: true }
    await group('redirects on 1k links, 1 worker, 64 connections', [
      ceilingEntry('ceil_hot1', node1, 'node:http ceiling, 302'),
      svcHot,
      wrkEntry('ceil_unknown', 'node:http ceiling, 404', node1, { connections: C_THROUGHPUT, args: redirectArgs(unknownFile) }),
      wrkEntry('unknown', 'unknown codes (404), 1 worker', s1, { connections: C_THROUGHPUT, args: redirectArgs(unknownFile) }),
    ])

    // Access logging on the redirect path (issue 3: it may cost at most a fifth of the throughput).
    const otherLog = ACCESS_LOG === 'all' ? 'api' : 'all'
    const other = await startService(`1-worker-access-log-${otherLog}`, { ACCESS_LOG: otherLog })
    await sanityChecks(other, smallLinks, small.unknown.map(codeFor))
    const logLabel = { all: 'ACCESS_LOG=all (a JSON line per redirect, to a file)', api: 'ACCESS_LOG=api (redirects not logged)', off: 'ACCESS_LOG=off' }
    await group('access log on the redirect path: hot redirect, 1 worker, 64 connections', [
      { ...wrkEntry(`log_${ACCESS_LOG}`, `hot redirect, ${logLabel[ACCESS_LOG]}`, s1, { connections: C_THROUGHPUT, args: hot }), countsRedirects: true },
      { ...wrkEntry(`log_${otherLog}`, `hot redirect, ${logLabel[otherLog]}`, other, { connections: C_THROUGHPUT, args: hot }), countsRedirects: true },
    ])
    await stopService(other)
  }

  // Visit statistics on the redirect path (issue 10: the cached redirect keeps ≥ 0.97× of its
  // rate without them). Both services count into the same database, like the access-log pair.
  const noStats = await startService('1-worker-visit-stats-off', { VISIT_STATS: 'off' })
  await sanityChecks(noStats, smallLinks, small.unknown.map(codeFor))
  const visitArgs = (round) => ['visit', linksFile, String((round * 613) % 4096), '0']
  // Throughput swings with whatever else the machine runs; the service's own CPU time per
  // redirect (its flushes included) does much less, so both are kept.
  const visitEntry = (key, label, svc) => {
    const entry = { ...wrkEntry(key, label, svc, { connections: C_THROUGHPUT, args: visitArgs }), countsRedirects: true }
    const run = entry.run
    entry.run = async (round, seconds) => {
      const before = treeCpuSeconds(svc.pid)
      const r = await run(round, seconds)
      await sleep(1_200) // the flush of the last second's visits belongs to this point
      return { ...r, cpu_us: ((treeCpuSeconds(svc.pid) - before) * 1e6) / r.requests }
    }
    return entry
  }
  await group('visit statistics on the redirect path: hot redirect, browser-like requests, 1 worker, 64 connections', [
    visitEntry('stats_on', 'hot redirect, browser-like, VISIT_STATS=on', s1),
    visitEntry('stats_off', 'hot redirect, browser-like, VISIT_STATS=off', noStats),
  ])
  await stopService(noStats)

  const stormEntry = {
    key: 'storm',
    label: `8 connections during a ${STORM}-login storm`,
    warm: false,
    countsRedirects: true,
    async run(round, seconds) {
      const storm = runWrk({
        url: s1.url,
        connections: STORM,
        seconds: seconds + 3,
        timeout: '60s',
        args: ['login', 'owner1', PASSWORD],
      })
      await sleep(1_500)
      const light = await runWrk({ url: s1.url, connections: C_LIGHT, seconds, args: hot(round) })
      return { ...light, storm: await storm }
    },
  }
  // Issue 9: a burst of 60 simultaneous logins (60 addresses, half of them unknown usernames) must
  // get only 200 and 401, while redirects go on (slowest under 1 s, p99 under 10 ms).
  const burstEntry = {
    key: 'burst',
    label: `8 connections during a burst of ${BURST} logins`,
    warm: false,
    countsRedirects: true,
    async run(round, seconds) {
      const light = runWrk({ url: s1.url, connections: C_LIGHT, seconds, args: hot(round) })
      await sleep(1_000)
      const burst = await loginBurst(s1.url, round)
      return { ...(await light), burst }
    },
  }
  await group('redirect latency at light load: 8 connections, hot cache, 1 worker', [
    wrkEntry('ceil_light', 'node:http ceiling, 8 connections', node1, { connections: C_LIGHT, args: hot }),
    { ...wrkEntry('light', 'hot redirect, 8 connections', s1, { connections: C_LIGHT, args: hot }), countsRedirects: true },
    stormEntry,
    burstEntry,
  ])

  const loginEntries = [
    {
      key: 'ceil_argon2',
      label: `argon2id on the service's ${KDF_THREADS} KDF threads, ${C_LOGIN} in flight`,
      warm: false,
      run: (_round, seconds) =>
        runNodeJson(join(BENCH_DIR, 'argon2.mjs'), [ARGON2.memoryKiB, ARGON2.iterations, KDF_THREADS, C_LOGIN, seconds].map(String)),
    },
    { ...wrkEntry('login', 'login', s1, { connections: C_LOGIN, args: ['login', 'owner1', PASSWORD], timeout: '60s' }), warm: false },
  ]
  if (LOGINS_ONLY) await group(`login, 1 worker (${C_LOGIN} connections)`, loginEntries)
  else {
    await group('API, 1 worker: create link and list links (16 connections), login (8 connections)', [
      wrkEntry('ceil_api', 'node:http ceiling, 16 connections', node1, { connections: C_API, args: hot }),
      wrkEntry('create', 'create link', s1, { connections: C_API, args: ['create', creatorTokens] }),
      wrkEntry('list', 'list links (50 per account)', s1, { connections: C_API, args: ['list', ownerTokens] }),
      ...loginEntries,
    ])
  }
  await sleep(1_000)
  const s1End = treeMemory(s1.pid)
  await stopService(s1)
  if (LOGINS_ONLY) {
    await stopChild(node1.child)
    buildRows({ twoWorkers: 'not run (BENCH_ONLY=logins)' })
    say('\n' + renderTable(rows, []))
    say('\nBENCH_ONLY=logins: docs/performance.md left as it was')
    return
  }
  const embeddedNote = database.kind === 'embedded' ? ['includes the embedded PGlite database'] : []
  memory.push({ figure: 'RSS, 1 worker, idle after start', bytes: s1Idle.rss, target: 80 * 2 ** 20, notes: embeddedNote })
  memory.push({ figure: 'RSS, 1 worker, at the end of the load', bytes: s1End.rss, notes: [`peak (VmHWM) ${mb(s1End.hwm)}`, ...embeddedNote] })

  db = await database.open()
  const visitsAfter = await totalVisits(db)
  await db.close()
  const visitCheck = { recorded: visitsAfter - visitsBefore, counted: servedRedirects.total }
  say(`\nvisits: ${visitCheck.recorded.toLocaleString('en-US')} recorded in the database; wrk counted ${visitCheck.counted.toLocaleString('en-US')} redirects (requests in flight when wrk stops are served but not counted)`)

  // 5. Two workers (PostgreSQL only).
  let twoWorkers = 'skipped: WORKERS > 1 needs PostgreSQL (set BENCH_ADMIN_URL or BENCH_DATABASE_URL)'
  if (database.kind === 'postgresql') {
    const node2 = await startCeiling('node-2', linksFile, 2)
    const s2 = await startService('2-workers', { WORKERS: '2' })
    await sleep(1_000)
    const s2Idle = treeMemory(s2.pid)
    await group('hot redirect on 1k links, 2 workers (node:cluster), 64 connections; wrk shares the 2 cores', [
      wrkEntry('ceil_hot2', 'node:http ceiling, 2-process cluster', node2, { connections: C_THROUGHPUT, args: hot }),
      wrkEntry('hot2', 'hot redirect, 2 workers', s2, { connections: C_THROUGHPUT, args: hot }),
    ])
    const s2End = treeMemory(s2.pid)
    await stopService(s2)
    await stopChild(node2.child)
    memory.push({ figure: `RSS, 2 workers (sum of ${s2Idle.processes} processes), idle`, bytes: s2Idle.rss })
    memory.push({ figure: `RSS, 2 workers (sum of ${s2End.processes} processes), end of load`, bytes: s2End.rss })
    twoWorkers = undefined
  }

  // 6. The 1M set (opt-in).
  let large
  if (LARGE) {
    say('\n== seeding the 1M-link set')
    const t0 = Date.now()
    db = await database.open()
    const first = small.links.length + 1
    const { total } = await seedLarge(db, { from: first, to: LARGE_TOTAL, passwordHash, say })
    await db.close()
    const seedSeconds = (Date.now() - t0) / 1000
    say(`seeded in ${seedSeconds.toFixed(0)} s; ${total.toLocaleString('en-US')} links in the database`)
    // The ceiling holds all 1M in its Map; the hot set is 1,000 links spread evenly over the 1M.
    const all = []
    for (let i = 1; i <= LARGE_TOTAL; i++) all.push(i)
    const bigFile = join(tmp, 'links-1m.tsv')
    writeFileSync(bigFile, all.map((i) => `${codeFor(i)}\t${urlFor(i)}\n`).join(''))
    const hotFile = join(tmp, 'links-1m-hot.tsv')
    writeFileSync(hotFile, all.filter((i) => i % 1000 === 500).map((i) => `${codeFor(i)}\n`).join(''))
    shuffle(all, 12345)
    const coldFile = join(tmp, 'links-1m-cold.tsv')
    writeFileSync(coldFile, all.map((i) => `${codeFor(i)}\n`).join(''))
    all.length = 0

    const nodeL = await startCeiling('node-1m', bigFile, 1)
    const s3 = await startService('1-worker-1m', { CACHE_MAX_BYTES: String(SMALL_CACHE_BYTES) })
    await sleep(1_000)
    const s3Idle = treeMemory(s3.pid)
    const entryBytes = 96 + urlFor(500_000).length // the cache's own per-entry estimate
    // Each round (and the warm-up, as round ROUNDS) walks its own stretch of the shuffled list.
    const cold = redirectArgs(coldFile, 0, (r) => r * Math.floor(LARGE_TOTAL / (ROUNDS + 1)))
    await group(`1M links, 1 worker, CACHE_MAX_BYTES=${SMALL_CACHE_BYTES} (about ${Math.floor(SMALL_CACHE_BYTES / entryBytes).toLocaleString('en-US')} entries), 64 connections`, [
      wrkEntry('ceil_hot1m', 'node:http ceiling (1M-entry Map), hot 1k', nodeL, { connections: C_THROUGHPUT, args: redirectArgs(hotFile) }),
      wrkEntry('hot1m', 'hot redirect, 1k of 1M links', s3, { connections: C_THROUGHPUT, args: redirectArgs(hotFile) }),
      wrkEntry('ceil_cold', 'node:http ceiling (1M-entry Map), all 1M', nodeL, { connections: C_THROUGHPUT, args: cold }),
      wrkEntry('cold', 'cold redirect, walking all 1M links', s3, { connections: C_THROUGHPUT, args: cold }),
    ])
    const s3End = treeMemory(s3.pid)
    await stopService(s3)
    await stopChild(nodeL.child)
    memory.push({ figure: 'RSS, 1 worker on 1M links (1 MiB cache), idle', bytes: s3Idle.rss, notes: embeddedNote })
    memory.push({ figure: 'RSS, 1 worker on 1M links (1 MiB cache), end of load', bytes: s3End.rss, notes: [`peak (VmHWM) ${mb(s3End.hwm)}`, ...embeddedNote] })
    large = { total, seedSeconds, cacheEntries: Math.floor(SMALL_CACHE_BYTES / entryBytes) }
  }
  await stopChild(node1.child)

  // 7. The table and the document.
  buildRows({ twoWorkers, large })
  const table = renderTable(rows, memory)
  say('\n' + table)
  const missed = misses(rows, memory)
  if (missed.length) say(`\ntargets missed${DEV_RUN ? ' (development run: noisy)' : ''}:\n${missed.map((m) => `- ${m}`).join('\n')}`)
  const doc = renderDoc({
    table,
    missed,
    started,
    finished: new Date(),
    dev: DEV_RUN,
    command: commandLine(),
    machine: machine(load0),
    database: `${database.describe}; ${dbVersion}`,
    settings: {
      SECONDS,
      ROUNDS,
      WARM_SECONDS,
      ARGON2,
      defaultArgon2: DEFAULTS.argon2,
      KDF_THREADS,
      BURST,
      ACCESS_LOG,
      C_THROUGHPUT,
      C_LIGHT,
      C_API,
      C_LOGIN,
      STORM,
      CREATORS,
      OWNERS,
      SMALL_CACHE_BYTES,
      defaultCacheBytes: DEFAULTS.cacheMaxBytes,
      visitFlushMs: DEFAULTS.visitFlushMs,
      negativeCacheMs: DEFAULTS.negativeCacheMs,
      urlBytes: urlFor(500_000).length,
      large,
      twoWorkers,
      nginx: nginx !== undefined,
    },
    visitCheck,
    commit: commit(),
  })
  writeFileSync(join(ROOT, 'docs', 'performance.md'), doc)
  say(`\nwrote docs/performance.md${DEV_RUN ? ' (marked as a development run)' : ''}`)
}

function buildRows({ twoWorkers, large }) {
  const S_CEIL = 'Ceilings'
  const S_RED = 'Redirects, 1k links'
  const S_LAT = 'Redirect latency at light load (8 connections, hot)'
  const S_API = 'API, 1 worker'
  const S_BIG = 'Redirects, 1M links'
  const S_KDF = 'Password KDF: one hash alone on one thread (median of 5)'
  row(S_CEIL, 'nginx `return 302` from a map, 1 worker', 'rps', 'nginx', rps)
  row(S_CEIL, 'node:http 302 from a Map, 1 process (ratio: to nginx)', 'rps', 'ceil_node1_vs_nginx', rps, { ceilingKey: 'nginx' })
  row(S_CEIL, 'node:http 302 from a Map, 2-process cluster', 'rps', 'ceil_hot2', rps)

  const hot1 = row(S_RED, 'hot redirect, 1 worker', 'rps', 'hot1', rps, { ceilingKey: 'ceil_hot1', target: atLeast(0.85, '≥ 0.85× ceiling') })
  row(S_RED, 'hot redirect, 2 workers', 'rps', 'hot2', rps, { ceilingKey: 'ceil_hot2', target: atLeast(0.85, '≥ 0.85× ceiling') })
  if (twoWorkers) rows.push({ section: S_RED, figure: 'hot redirect, 2 workers', unit: 'rps', values: [], notes: [twoWorkers] })
  row(S_RED, 'unknown codes (404), 1 worker', 'rps', 'unknown', rps, { ceilingKey: 'ceil_unknown', expect404: true })
  if (results.unknown && results.hot1) {
    ratioRow(S_RED, 'unknown codes ÷ hot redirect (same round)', perRound('unknown', 'hot1', rps), 0.95, '≥ 0.95 (no costlier than a hit, 5% noise allowed)')
  }

  const unlogged = results.log_api ? 'api' : 'off'
  if (results.log_all && results[`log_${unlogged}`]) {
    const figure = `hot redirect with ACCESS_LOG=all ÷ with ACCESS_LOG=${unlogged} (same round)`
    ratioRow(S_RED, figure, perRound('log_all', `log_${unlogged}`, rps), 0.8, '≥ 0.80 (logging costs at most a fifth)')
  }

  row(S_RED, 'hot redirect, browser-like requests, VISIT_STATS=on', 'rps', 'stats_on', rps)
  if (results.stats_on && results.stats_off) {
    const cpuUs = (r) => r.cpu_us
    ratioRow(S_RED, 'hot redirect with visit statistics ÷ without (VISIT_STATS=on ÷ off, same round)', perRound('stats_on', 'stats_off', rps), 0.97, '≥ 0.97 (issue 10)')
    ratioRow(S_RED, 'the same as CPU time: service CPU per redirect without ÷ with statistics (same round)', perRound('stats_off', 'stats_on', cpuUs), 0.97, '≥ 0.97 (issue 10)', [
      `CPU per redirect (flushes included): ${median(values('stats_on', cpuUs)).toFixed(1)} µs with, ${median(values('stats_off', cpuUs)).toFixed(1)} µs without`,
    ])
  }

  row(S_LAT, 'p50', 'us', 'light', p50, { ceilingKey: 'ceil_light' })
  row(S_LAT, 'p99', 'us', 'light', p99, { ceilingKey: 'ceil_light', target: below(1_000, '< 1 ms') })
  row(S_LAT, `p99 while ${STORM} logins run without pause`, 'us', 'storm', p99, { ceilingKey: 'ceil_light', target: below(5_000, '< 5 ms') })
  if (results.storm) {
    const storm = results.storm.map((r) => r.storm)
    const failed = storm.reduce((a, s) => a + s.status_errors + s.socket_errors, 0)
    rows.push({
      section: S_LAT,
      figure: `logins completed during the storm (argon2id m=${ARGON2.memoryKiB} KiB, t=${ARGON2.iterations})`,
      unit: 'lps',
      values: storm.map((s) => s.rps),
      notes: failed ? [`${failed} logins failed`] : [],
    })
  }
  row(S_LAT, `p99 during a burst of ${BURST} logins`, 'us', 'burst', p99, { ceilingKey: 'ceil_light', target: below(10_000, '< 10 ms') })
  row(S_LAT, `slowest redirect during the burst`, 'us', 'burst', (r) => r.max_us, { target: below(1_000_000, '< 1 s') })
  if (results.burst) {
    const bursts = results.burst.map((r) => r.burst)
    const only200And401 = bursts.every((b) => Object.keys(b.statuses).every((s) => s === '200' || s === '401'))
    rows.push({
      section: S_LAT,
      figure: `the burst's ${BURST} logins (${BURST} addresses, half unknown): slowest answer`,
      unit: 'us',
      values: bursts.map((b) => b.slowestMs * 1000),
      target: 'only 200 and 401, each within 30 s',
      met: only200And401 && bursts.every((b) => b.slowestMs < 30_000),
      notes: bursts.map((b, i) => `round ${i + 1}: ${Object.entries(b.statuses).map(([s, n]) => `${n} × ${s}`).join(', ')}`),
    })
  }

  row(S_API, `create link, ${C_API} connections`, 'rps', 'create', rps, { ceilingKey: 'ceil_api' })
  row(S_API, 'create link p99', 'us', 'create', p99, { ceilingKey: 'ceil_api' })
  row(S_API, `list links (50 each), ${C_API} connections`, 'rps', 'list', rps, { ceilingKey: 'ceil_api' })
  row(S_API, 'list links p99', 'us', 'list', p99, { ceilingKey: 'ceil_api' })
  row(S_API, `login, ${C_LOGIN} connections (ceiling: argon2id on the same threads, no HTTP)`, 'rps', 'login', rps, {
    ceilingKey: 'ceil_argon2',
    target: atLeast(0.8, '≥ 0.8× ceiling'),
  })
  row(S_API, 'login p99', 'us', 'login', p99, { ceilingKey: 'ceil_argon2' })

  row(S_KDF, 'scrypt N=2^16, r=8, p=1 (node:crypto; the previous release)', 'us', 'kdf', (r) => r.scrypt16_us, { notes: ['64 MiB'] })
  row(S_KDF, "scrypt N=2^17, r=8, p=1 (node:crypto; OWASP's scrypt setting)", 'us', 'kdf', (r) => r.scrypt17_us, { notes: ['128 MiB'] })
  row(S_KDF, `argon2id m=${ARGON2.memoryKiB} KiB, t=${ARGON2.iterations}, p=1 (@noble/hashes; this release)`, 'us', 'kdf', (r) => r.argon2id_us, {
    notes: [`${(ARGON2.memoryKiB / 1024).toFixed(0)} MiB`],
  })

  if (large) {
    const hot1m = row(S_BIG, 'hot redirect, 1k of 1M links', 'rps', 'hot1m', rps, { ceilingKey: 'ceil_hot1m' })
    if (hot1m && hot1) {
      const rel = median(hot1m.ratios) / median(hot1.ratios)
      Object.assign(hot1m, {
        target: 'ratio ≥ 0.90× the 1k set’s (within 10%)',
        met: rel >= 0.9,
      })
      hot1m.notes.push(`ratio ÷ 1k-set ratio = ${rel.toFixed(2)}`)
    }
    row(S_BIG, `cold redirect, all 1M links walked (cache holds ~${large.cacheEntries.toLocaleString('en-US')})`, 'rps', 'cold', rps, {
      ceilingKey: 'ceil_cold',
      target: atLeast(0.25, '≥ 0.25× ceiling'),
    })
    row(S_BIG, 'cold redirect p99', 'us', 'cold', p99, { ceilingKey: 'ceil_cold' })
  } else {
    rows.push({ section: S_BIG, figure: 'hot and cold redirect on 1M links', unit: 'rps', values: [], notes: ['not run: BENCH_LARGE=1 adds it'] })
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * BURST logins at one moment, each from its own address: every other one for a seeded account
 * (the right password), the rest for unknown usernames. Returns the statuses and the slowest answer.
 */
async function loginBurst(url, round) {
  const started = performance.now()
  const answers = await Promise.all(
    Array.from({ length: BURST }, async (_, i) => {
      const username = i % 2 === 0 ? `creator${round * BURST + i + 1}` : `nobody-${round}-${i}`
      const t0 = performance.now()
      try {
        const res = await fetch(`${url}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.${200 + round}.0.${i + 1}` },
          body: JSON.stringify({ username, password: PASSWORD }),
        })
        await res.arrayBuffer()
        return { status: res.status, ms: performance.now() - t0 }
      } catch {
        return { status: 'socket error', ms: performance.now() - t0 }
      }
    }),
  )
  const statuses = {}
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1
  return { statuses, slowestMs: Math.max(...answers.map((a) => a.ms)), wallMs: performance.now() - started }
}

async function sanityChecks(svc, links, unknown) {
  for (const [code, location] of [links[0], links[links.length - 1]]) {
    const res = await fetch(`${svc.url}/r/${code}`, { redirect: 'manual' })
    await res.arrayBuffer()
    if (res.status !== 302 || res.headers.get('location') !== location) {
      throw new Error(`sanity check: /r/${code} answered ${res.status} ${res.headers.get('location')}, expected 302 ${location}`)
    }
  }
  const res = await fetch(`${svc.url}/r/${unknown[0]}`, { redirect: 'manual' })
  await res.arrayBuffer()
  if (res.status !== 404) throw new Error(`sanity check: unknown code answered ${res.status}`)
  const login = await fetch(`${svc.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'owner1', password: PASSWORD }),
  })
  const body = await login.json()
  if (login.status !== 200) throw new Error(`sanity check: login answered ${login.status} ${JSON.stringify(body)}`)
  const list = await fetch(`${svc.url}/api/v1/links`, { headers: { authorization: `Bearer ${body.token}` } })
  const listed = await list.json()
  if (list.status !== 200 || listed.links?.length !== 50) throw new Error(`sanity check: list answered ${list.status} with ${listed.links?.length} links`)
}

function shuffle(array, seed) {
  let s = seed >>> 0
  const next = () => {
    // mulberry32
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  for (let i = array.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[array[i], array[j]] = [array[j], array[i]]
  }
}

const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MB`

function commandLine() {
  const vars = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_'))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${/URL$/.test(k) ? redactUrl(v) : v}`)
  const entry = process.env.npm_lifecycle_event === 'bench' ? 'npm run bench' : 'scripts/bench.sh'
  return [...vars, entry].join(' ')
}

function redactUrl(v) {
  try {
    const u = new URL(v)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return v
  }
}

function firstLine(cmd, args) {
  // wrk -v exits 1 after its usage; nginx -v writes to stderr: take the first line of either.
  const r = spawnSync(cmd, args, { encoding: 'utf8' })
  if (r.error) return `${cmd}: not found`
  return `${r.stdout ?? ''}\n${r.stderr ?? ''}`.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? `${cmd}: unknown version`
}

function machine(load0) {
  const cpus = os.cpus()
  return {
    cores: os.availableParallelism(),
    cpu: cpus[0]?.model ?? 'unknown',
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    kernel: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    wrk: firstLine('wrk', ['-v']).replace(/ Copyright.*/, ''),
    nginx: firstLine('nginx', ['-v']),
    load: `${load0.map((x) => x.toFixed(2)).join(' ')} at the start, ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} at the end`,
  }
}

function commit() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'sql'], { cwd: ROOT, encoding: 'utf8' }).trim()
    return dirty ? `${head} with uncommitted changes in src/ or sql/` : head
  } catch {
    return 'unknown'
  }
}

try {
  await main()
  finished = true
  await cleanup()
} catch (err) {
  if (interrupted) await new Promise(() => {}) // the signal handler cleans up and exits
  say(`\nbench failed: ${err instanceof Error ? err.stack : String(err)}`)
  await cleanup()
  process.exit(1)
}
