// `npm run bench` (via scripts/bench.sh): every figure next to a ceiling measured in the same run,
// interleaved round by round, median of BENCH_ROUNDS rounds. What runs is data (scenarios.mjs),
// what is reported too (rows.mjs); this file seeds, runs the groups and writes docs/performance.md.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { codeFor, databaseVersion, prepareDatabase, seedLarge, seedSmall, totalVisits, urlFor } from './db.mjs'
import { BENCH_DIR, ROOT, killAllNow, runNodeJson, runWrk, sleep, stopAll, treeCpuSeconds, treeMemory } from './lib.mjs'
import * as O from './options.mjs'
import { nginxPresent, start, stop } from './processes.mjs'
import { WHY } from './findings.mjs'
import { commandLine, commit, keptRecordSize, machine, misses, renderDoc, renderTable } from './report.mjs'
import { buildRows, extraRows, rowSpecs } from './rows.mjs'
import { groups, processes } from './scenarios.mjs'

const say = (line = '') => process.stdout.write(line + '\n')
const { Passwords } = await import(pathToFileURL(join(ROOT, 'dist', 'passwords', 'passwords.js')).href)

// ---------------------------------------------------------------------------------------------
// Lifecycle: everything we start is killed on the way out, however we leave.

const tmp = mkdtempSync(join(os.tmpdir(), 'link-bench-'))
let database
let finished = false
let interrupted = false
let cleaning
function cleanup() {
  cleaning ??= (async () => {
    await stopAll()
    if (database !== undefined) await database.cleanup().catch((err) => say(`could not drop the bench database: ${err.message}`))
    if (O.KEEP) say(`work directory kept: ${tmp}`)
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
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    // npm passes the terminal's Ctrl-C on as well: a repeat while cleaning up is ignored, and the
    // cleanup is given 30 s at most (the 'exit' hook still kills every child).
    if (interrupted) return
    interrupted = true
    say(`\n${signal}: stopping every process the bench started...`)
    setTimeout(() => process.exit(130), 30_000).unref()
    cleanup().finally(() => process.exit(130))
  })
}

// ---------------------------------------------------------------------------------------------
// Running the groups

const results = {} // key -> [result per round]
const memory = []
let servedRedirects = 0 // 302s wrk counted from the services: checked against the visits recorded

/** One point: a wrk run, or one of the login points. */
async function runEntry(e, round, seconds, running) {
  const target = running.get(e.on)
  const wrk = (connections, args, secs = seconds, timeout = e.timeout) => runWrk({ url: target.url, connections, seconds: secs, timeout, args: typeof args === 'function' ? args(round) : args })
  if (e.kind === 'argon2') {
    return runNodeJson(join(BENCH_DIR, 'argon2.mjs'), [O.ARGON2.memoryKiB, O.ARGON2.iterations, O.KDF_THREADS, O.C_LOGIN, seconds].map(String))
  }
  if (e.kind === 'storm') {
    // STORM logins without pause, from 1.5 s before the measurement to 1.5 s after it.
    const storm = runWrk({ url: target.url, connections: O.STORM, seconds: seconds + 3, timeout: '60s', args: ['login', 'owner1', O.PASSWORD] })
    await sleep(1_500)
    const light = await wrk(e.c, e.args)
    return { ...light, storm: await storm }
  }
  if (e.kind === 'burst') {
    const light = wrk(e.c, e.args)
    await sleep(1_000)
    const burst = await loginBurst(target.url, round)
    return { ...(await light), burst }
  }
  if (!e.cpu) return wrk(e.c, e.args)
  // Throughput swings with whatever else the machine runs; the service's own CPU time per
  // request (its flush after the point included) much less.
  const before = treeCpuSeconds(target.pid)
  const r = await wrk(e.c, e.args)
  await sleep(1_200)
  return { ...r, cpu_us: ((treeCpuSeconds(target.pid) - before) * 1e6) / r.requests }
}

function describe(r) {
  const parts = [`${Math.round(r.rps).toLocaleString('en-US')} req/s`]
  if (r.p50_us !== undefined) parts.push(`p50 ${(r.p50_us / 1000).toFixed(2)} ms`, `p99 ${(r.p99_us / 1000).toFixed(2)} ms`)
  if (r.status_errors) parts.push(`${r.status_errors} status>399`)
  if (r.socket_errors) parts.push(`${r.socket_errors} socket errors/timeouts`)
  if (r.storm) parts.push(`storm ${r.storm.rps.toFixed(1)} logins/s`)
  if (r.burst) parts.push(`burst: ${Object.entries(r.burst.statuses).map(([s, n]) => `${n} × ${s}`).join(', ')}, slowest ${(r.burst.slowestMs / 1000).toFixed(1)} s`, `slowest redirect ${(r.max_us / 1000).toFixed(1)} ms`)
  return parts.join(', ')
}

async function runGroup(g, running) {
  say(`\n== ${g.title}`)
  const record = (e, r) => {
    if (e.visits && r.requests !== undefined) servedRedirects += r.requests - (r.status_errors ?? 0)
  }
  for (const e of g.entries.filter((x) => x.warm !== false)) {
    const r = await runEntry(e, O.ROUNDS, O.WARM_SECONDS, running) // round ROUNDS: offsets unlike any measured round
    record(e, r)
    say(`  warm-up ${e.label}: ${describe(r)}`)
  }
  for (let round = 0; round < O.ROUNDS; round++) {
    const order = round % 2 === 0 ? g.entries : [...g.entries].reverse()
    for (const e of order) {
      const r = await runEntry(e, round, O.SECONDS, running)
      record(e, r)
      ;(results[e.key] ??= [])[round] = r
      say(`  round ${round + 1}/${O.ROUNDS} ${e.label}: ${describe(r)}`)
    }
  }
}

/**
 * Runs the groups in order. Each process a group needs is started before it (and checked), and
 * stopped after the last group that needs it. On the embedded database each service gets its own
 * copy of the seeded data directory, as a process holds its directory alone.
 */
async function runAll(plan, specs, files) {
  const running = new Map()
  const needs = (g) => new Set(g.entries.map((e) => e.on).filter((n) => n !== undefined))
  for (const [i, g] of plan.entries()) {
    for (const name of needs(g)) {
      if (running.has(name)) continue
      const spec = specs[name]
      let db = database
      if (spec.kind === 'service' && database.kind === 'embedded') {
        const dir = join(tmp, `data-${name}`)
        cpSync(join(tmp, 'data'), dir, { recursive: true })
        db = { ...database, serviceEnv: { DATA_DIR: dir } }
      }
      const proc = await start(name, spec, { tmp, database: db })
      running.set(name, proc)
      if (spec.kind === 'service') {
        await sleep(1_000)
        if (spec.memory) memory.push({ figure: spec.memory.idle, bytes: treeMemory(proc.pid).rss, ...memoryTarget(spec) })
        await sanityChecks(proc, files)
      }
    }
    await runGroup(g, running)
    const later = new Set(plan.slice(i + 1).flatMap((x) => [...needs(x)]))
    for (const [name, proc] of running) {
      if (later.has(name)) continue
      if (specs[name].memory) {
        await sleep(1_000)
        const m = treeMemory(proc.pid)
        memory.push({ figure: specs[name].memory.end, bytes: m.rss, notes: [`peak (VmHWM) ${(m.hwm / 2 ** 20).toFixed(1)} MB`, ...embeddedNote()] })
      }
      await stop(proc, say)
      running.delete(name)
    }
  }
}

const embeddedNote = () => (database.kind === 'embedded' ? ['includes the embedded PGlite database'] : [])
const memoryTarget = (spec) => (spec.memory.idle.startsWith('RSS, 1 worker, idle') ? { target: 70 * 2 ** 20, why: WHY.rssIdle, notes: embeddedNote() } : { notes: embeddedNote() })

async function sanityChecks(svc, f) {
  for (const [code, location] of [f.smallLinks[0], f.smallLinks[f.smallLinks.length - 1]]) {
    const res = await fetch(`${svc.url}/r/${code}`, { redirect: 'manual' })
    await res.arrayBuffer()
    if (res.status !== 302 || res.headers.get('location') !== location) {
      throw new Error(`sanity check: /r/${code} answered ${res.status} ${res.headers.get('location')}, expected 302 ${location}`)
    }
  }
  const res = await fetch(`${svc.url}/r/${codeFor(f.unknown[0])}`, { redirect: 'manual' })
  await res.arrayBuffer()
  if (res.status !== 404) throw new Error(`sanity check: unknown code answered ${res.status}`)
  const list = await fetch(`${svc.url}/api/v1/links`, { headers: { authorization: `Bearer ${f.firstOwnerToken}` } })
  const listed = await list.json()
  if (list.status !== 200 || listed.links?.length !== 50) throw new Error(`sanity check: list answered ${list.status} with ${listed.links?.length} links`)
}

/**
 * BURST logins at one moment, each from its own address: every other one for a seeded account
 * (the right password), the rest for unknown usernames. Returns the statuses and the slowest answer.
 */
async function loginBurst(url, round) {
  const answers = await Promise.all(
    Array.from({ length: O.BURST }, async (_, i) => {
      const username = i % 2 === 0 ? `creator${round * O.BURST + i + 1}` : `nobody-${round}-${i}`
      const t0 = performance.now()
      try {
        const res = await fetch(`${url}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.${200 + round}.0.${i + 1}` },
          body: JSON.stringify({ username, password: O.PASSWORD }),
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
  return { statuses, slowestMs: Math.max(...answers.map((a) => a.ms)) }
}

/** A seeded shuffle (mulberry32), so every run walks the 1M codes in the same order. */
function shuffle(array, seed) {
  let s = seed >>> 0
  const next = () => {
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

const lines = (file, rows) => {
  writeFileSync(join(tmp, file), rows.map((r) => (Array.isArray(r) ? r.join('\t') : r) + '\n').join(''))
  return join(tmp, file)
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const started = new Date()
  const load0 = os.loadavg()
  say(`npm run bench: ${O.SECONDS} s per point, ${O.ROUNDS} round(s), ${O.LARGE ? 'with' : 'without'} the 1M-link set${O.DEV_RUN ? ' (development run: too short to quote)' : ''}`)
  say(`work directory: ${tmp}`)
  database = await prepareDatabase({ env: process.env, dataDir: join(tmp, 'data'), say })
  const hasNginx = nginxPresent()
  if (!hasNginx) say('nginx not found: its ceiling is skipped (apt-get install nginx-light)')

  // The schema is the service's own: it migrates the empty database once.
  say('\n== preparing')
  await stop(await start('migrate', { kind: 'service', env: {} }, { tmp, database }), say)
  const hasher = new Passwords(O.ARGON2, 1)
  const passwordHash = await hasher.hash(O.PASSWORD)
  await hasher.close()
  let db = await database.open()
  const dbVersion = await databaseVersion(db)
  const small = await seedSmall(db, { owners: O.OWNERS, creators: 2 * O.CREATORS, doomed: 2 * O.DOOMED, passwordHash })
  let large
  const f = { hasNginx, smallLinks: small.links.map((i) => [codeFor(i), urlFor(i)]), unknown: small.unknown, firstOwnerToken: small.ownerTokens[0] }
  if (O.LARGE && !O.LOGINS_ONLY) {
    say('\n== seeding the 1M-link set')
    const t0 = Date.now()
    const { total } = await seedLarge(db, { from: small.links.length + 1, to: O.LARGE_TOTAL, passwordHash, say })
    const all = Array.from({ length: O.LARGE_TOTAL }, (_, k) => k + 1)
    f.big = lines('links-1m.tsv', all.map((i) => [codeFor(i), urlFor(i)]))
    // The hot set: 1,000 links spread evenly over the 1M.
    f.hot1m = lines('links-1m-hot.tsv', all.filter((i) => i % 1000 === 500).map(codeFor))
    shuffle(all, 12345)
    f.cold = lines('links-1m-cold.tsv', all.map(codeFor))
    const entryBytes = (await import(pathToFileURL(join(ROOT, 'dist', 'links', 'redirect-cache.js')).href)).entryBytes(urlFor(500_000))
    large = { total, seedSeconds: (Date.now() - t0) / 1000, cacheEntries: Math.floor(O.SMALL_CACHE_BYTES / entryBytes) }
    say(`seeded in ${large.seedSeconds.toFixed(0)} s; ${total.toLocaleString('en-US')} links in the database`)
  }
  const visitsBefore = await totalVisits(db)
  await db.close()
  say(`seeded ${small.links.length} links for ${O.OWNERS} accounts, ${2 * O.CREATORS} empty accounts for creations, ${(2 * O.DOOMED * 50).toLocaleString('en-US')} links to delete, a session each`)

  const half = (a, k) => a.slice(k * (a.length / 2), (k + 1) * (a.length / 2))
  Object.assign(f, {
    links1k: lines('links-1k.tsv', f.smallLinks),
    unknown1k: lines('unknown-1k.tsv', small.unknown.map(codeFor)),
    capped1k: lines('links-capped-1k.tsv', small.cappedLinks.map((i) => [codeFor(i), urlFor(i)])),
    ruled1k: lines('links-ruled-1k.tsv', small.ruledLinks.map((i) => [codeFor(i), urlFor(i)])),
    ownerTokens: lines('owner-tokens.txt', small.ownerTokens),
    creatorTokens: lines('creator-tokens.txt', half(small.creatorTokens, 0)),
    ceilingCreatorTokens: lines('ceiling-creator-tokens.txt', half(small.creatorTokens, 1)),
    patchFile: lines('patch.tsv', small.links.map((i) => [small.ownerTokens[Math.floor((i - 1) / 50)], codeFor(i), urlFor(i)])),
    doomedService: lines('doomed-service.tsv', half(small.doomedLinks, 0)),
    doomedCeiling: lines('doomed-ceiling.tsv', half(small.doomedLinks, 1)),
    doomedCount: small.doomedLinks.length / 2,
  })

  // The password KDF, one hash alone: the figures behind the choice of argon2id (decisions.md).
  say('\n== one password hash, median of 5: scrypt (node:crypto) and argon2id (@noble/hashes)')
  results.kdf = [await runNodeJson(join(BENCH_DIR, 'kdf-compare.mjs'), [O.ARGON2.memoryKiB, O.ARGON2.iterations].map(String))]

  const specs = processes(f)
  const onThisDatabase = (e) => !specs[e.on]?.pg || database.kind === 'postgresql'
  const plan = groups(f)
    .filter((g) => g.when !== false && (!O.LOGINS_ONLY || g.logins) && (!O.STATS_ONLY || g.stats) && (!O.LIMITS_ONLY || g.limits) && (!O.RULES_ONLY || g.rules))
    .map((g) => ({ ...g, entries: g.entries.filter((e) => onThisDatabase(e) && (!O.LOGINS_ONLY || e.logins || e.key === 'ceil_light')) }))
    .filter((g) => g.entries.length > 0)
  await runAll(plan, specs, f)

  const specsOfRows = rowSpecs({ large })
  const rows = buildRows(specsOfRows, results)
  for (const extra of extraRows(results, rows)) {
    const at = rows.findLastIndex((r) => r.section === extra.section)
    rows.splice(at + 1, 0, extra)
  }
  const table = renderTable(rows, memory)
  say('\n' + table)
  if (O.LOGINS_ONLY || O.STATS_ONLY || O.LIMITS_ONLY || O.RULES_ONLY) {
    say(`\nBENCH_ONLY=${process.env.BENCH_ONLY}: docs/performance.md left as it was`)
    return
  }
  db = await database.open()
  const visitCheck = database.kind === 'postgresql' ? { recorded: (await totalVisits(db)) - visitsBefore, counted: servedRedirects } : undefined
  await db.close()
  if (visitCheck) say(`\nvisits: ${visitCheck.recorded.toLocaleString('en-US')} recorded; wrk counted ${visitCheck.counted.toLocaleString('en-US')} redirects`)
  const missed = misses(rows, memory)
  if (missed.length) say(`\ntargets missed${O.DEV_RUN ? ' (development run: noisy)' : ''}:\n${missed.map((m) => `- ${m}`).join('\n')}`)
  const docPath = join(ROOT, 'docs', 'performance.md')
  const doc = renderDoc({
    table,
    missed,
    started,
    finished: new Date(),
    command: commandLine(),
    machine: machine(load0),
    database: `${database.describe}; ${dbVersion}`,
    settings: { ...O, defaultArgon2: O.DEFAULTS.argon2, defaultCacheBytes: O.DEFAULTS.cacheMaxBytes, visitFlushMs: O.DEFAULTS.visitFlushMs, negativeCacheMs: O.DEFAULTS.negativeCacheMs, urlBytes: urlFor(500_000).length, large, postgres: database.kind === 'postgresql', nginx: hasNginx },
    visitCheck,
    commit: commit(),
    recordSize: keptRecordSize(existsSync(docPath) ? readFileSync(docPath, 'utf8') : undefined),
  })
  writeFileSync(docPath, doc)
  say(`\nwrote docs/performance.md${O.DEV_RUN ? ' (marked as a development run)' : ''}`)
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
