// npm run profile: where a cached redirect, an unknown code, a cold redirect and a create-link
// request spend the CPU. Each runs alone on a fresh service started with `node --cpu-prof`, under
// wrk, next to its ceiling (the bench's) profiled the same way; the profiles' self time is summed by
// where the code lives (our modules, Node's HTTP and streams, the driver, GC), and the CPU of the
// service and of its PostgreSQL backends is read from /proc around the measured run. Writes
// docs/profile.md. Options: BENCH_ADMIN_URL (PostgreSQL: a fresh bench_* database, dropped after;
// else embedded, without the create and cold points), BENCH_SECONDS (default 10), PROFILE_ONLY (the
// points whose name holds this text, e.g. "browser": printed only, docs/profile.md left alone). The .cpuprofile
// files stay in the printed directory (Chrome's DevTools draws them as flame graphs).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { Passwords } from '../../dist/passwords/passwords.js'
import { codeFor, prepareDatabase, seedLarge, seedSmall, urlFor } from './db.mjs'
import { ROOT, runWrk, sleep, stopAll, treeCpuSeconds } from './lib.mjs'
import { ARGON2, PASSWORD, SMALL_CACHE_BYTES } from './options.mjs'
import { commandLine, commit, machine } from './report.mjs'
import { start, stop } from './processes.mjs'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const ONLY = process.env.PROFILE_ONLY // the points whose name holds this text, alone
const say = (s) => process.stdout.write(s + '\n')
const tmp = mkdtempSync(join(os.tmpdir(), 'link-profile-'))

const COLD_LINKS = 100_000
const SCENARIOS = [
  { name: 'cached redirect', mode: 'redirect', file: 'links', ceilingLinks: 'links', connections: 64 },
  // browsers' headers (User-Agent, Referer, X-Forwarded-For, Accept-Language) with full statistics
  { name: 'browser-like visit', mode: 'visit', file: 'links', ceilingLinks: 'links', connections: 64 },
  { name: 'unknown code', mode: 'redirect', file: 'unknown', ceilingLinks: 'links', connections: 64 },
  { name: `cold redirect (${COLD_LINKS / 1000}k links, a 1 MiB cache)`, mode: 'redirect', file: 'cold', ceilingLinks: 'cold', connections: 64, pg: true, env: { CACHE_MAX_BYTES: String(SMALL_CACHE_BYTES) } },
  { name: 'create link', mode: 'create', file: 'tokens', connections: 16, pg: true, api: true },
]

/** Self milliseconds by bucket and by function, from one .cpuprofile. */
function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map()
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000))
  const buckets = new Map()
  const functions = new Map()
  let busy = 0
  for (const [id, ms] of self) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame
    if (functionName === '(idle)') continue
    busy += ms
    const bucket = bucketOf(functionName, url)
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + ms)
    const fn = `${functionName || '(anonymous)'} ${shortUrl(url)}${url ? `:${lineNumber + 1}` : ''}`
    functions.set(fn, (functions.get(fn) ?? 0) + ms)
  }
  return { busy, buckets, functions }
}

function bucketOf(functionName, url) {
  if (functionName === '(garbage collector)') return 'garbage collection'
  if (functionName === '(program)') return '(program): native code, system calls'
  if (url.includes('/dist/') || url.includes('/scripts/bench/')) return `ours: ${shortUrl(url)}`
  if (url.includes('node_modules/')) return `package: ${url.split('node_modules/')[1].split('/').slice(0, url.includes('node_modules/@') ? 2 : 1).join('/')}`
  if (url.startsWith('node:')) return `node: ${url.slice(5).replace(/^internal\//, '').split('/')[0]}`
  return url === '' ? `native: ${functionName}` : `other: ${shortUrl(url)}`
}

/** The same order for the same input: a seeded Fisher–Yates. */
function shuffled(items, seed = 12345) {
  const a = [...items]
  let x = seed
  for (let i = a.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2147483648
    const j = x % (i + 1)
    ;[a[i], a[j]] = [a[j], a[i]]
  }
  return a
}

// Repository-relative: the machine's own paths stay out of docs/profile.md.
const shortUrl = (url) => url.replace(/^file:\/\/.*?\/(dist|scripts\/bench|node_modules)\//, '$1/').replace(/^node:/, '')

function table(title, map, busy, limit) {
  const rows = [...map].sort((a, b) => b[1] - a[1]).slice(0, limit)
  return [`${title}\n`, '| Where | Share of busy CPU |', '| --- | ---: |', ...rows.map(([k, ms]) => `| ${k} | ${((100 * ms) / busy).toFixed(1)}% |`)].join('\n')
}

/** CPU seconds so far of the PostgreSQL backends serving this database (none when embedded). */
async function backendsCpu(database) {
  if (database.kind !== 'postgresql') return 0
  const sql = postgres(database.url, { max: 1, onnotice: () => {}, fetch_types: false })
  try {
    const rows = await sql`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`
    return rows.reduce((sum, { pid }) => sum + treeCpuSeconds(pid), 0)
  } finally {
    await sql.end({ timeout: 2 })
  }
}

async function profileOne(label, spec, scenario, files, database) {
  const dir = join(tmp, label.replace(/\W+/g, '-'))
  mkdirSync(dir)
  const proc = await start(label.replace(/\W+/g, '-'), { ...spec, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] }, { tmp, database })
  const args = [scenario.mode, files[scenario.file], ...(scenario.mode === 'create' ? [] : ['1', '0'])]
  await runWrk({ url: proc.url, connections: scenario.connections, seconds: 2, args }) // warm: the JIT, a hot cache
  const cpu0 = [treeCpuSeconds(proc.pid), await backendsCpu(database)]
  const r = await runWrk({ url: proc.url, connections: scenario.connections, seconds: SECONDS, args })
  const cpu1 = [treeCpuSeconds(proc.pid), await backendsCpu(database)]
  await stop(proc, say)
  await sleep(200)
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error(`${label}: no profile written in ${dir}`)
  const perRequest = (i) => (1e6 * (cpu1[i] - cpu0[i])) / r.requests
  return { rps: r.rps, cpuUs: perRequest(0), dbCpuUs: perRequest(1), ...selfTimes(JSON.parse(readFileSync(join(dir, file), 'utf8'))) }
}

const describeMachine = (m) => `${m.cores} cores (${m.cpu}), ${m.memory} memory, ${m.kernel}; Node ${m.node}; ${m.wrk}`
const perSecond = (n) => `${Math.round(n).toLocaleString('en-US')}/s`
const micros = (us) => `${us.toFixed(us < 100 ? 1 : 0)} µs`

async function main() {
  const database = await prepareDatabase({ env: process.env, dataDir: join(tmp, 'data'), say })
  try {
    await stop(await start('migrate', { kind: 'service', env: {} }, { tmp, database }), say)
    const hasher = new Passwords(ARGON2, 1)
    const passwordHash = await hasher.hash(PASSWORD)
    await hasher.close()
    const db = await database.open()
    const small = await seedSmall(db, { owners: 20, creators: 2_000, doomed: 1, passwordHash })
    const cold = []
    if (database.kind === 'postgresql') {
      await seedLarge(db, { from: small.links.length + 1, to: COLD_LINKS, passwordHash, say })
      for (let i = 1; i <= COLD_LINKS; i++) cold.push([codeFor(i), urlFor(i)])
    }
    await db.close()
    const write = (name, lines) => {
      writeFileSync(join(tmp, name), lines.join('\n') + '\n')
      return join(tmp, name)
    }
    const links = small.links.map((i) => [codeFor(i), urlFor(i)])
    const files = {
      links: write('links.tsv', links.map((l) => l.join('\t'))),
      unknown: write('unknown.tsv', small.unknown.map(codeFor)),
      tokens: write('tokens.txt', small.creatorTokens),
      // the cold walk: every code once, in an order the cache cannot predict
      cold: write('cold.tsv', shuffled(cold).map((l) => l.join('\t'))),
    }
    const started = new Date()
    const load0 = os.loadavg()
    const sections = []
    for (const scenario of SCENARIOS) {
      if (ONLY !== undefined && !scenario.name.includes(ONLY)) continue
      if (scenario.pg && database.kind !== 'postgresql') continue // the API ceiling and the cold set want a real database
      const ceilingSpec = scenario.api ? { kind: 'api-ceiling' } : { kind: 'ceiling', links: files[scenario.ceilingLinks], workers: 1 }
      say(`== ${scenario.name}`)
      const svc = await profileOne(`${scenario.name} service`, { kind: 'service', env: { ACCESS_LOG: 'api', ...scenario.env } }, scenario, files, database)
      const ceil = await profileOne(`${scenario.name} ceiling`, ceilingSpec, scenario, files, database)
      const db = database.kind === 'postgresql' ? `; PostgreSQL backends' CPU per request: service ${micros(svc.dbCpuUs)}, ceiling ${micros(ceil.dbCpuUs)}` : ''
      sections.push(
        `## ${scenario.name}\n\nService ${perSecond(svc.rps)}, ceiling ${perSecond(ceil.rps)} (${(svc.rps / ceil.rps).toFixed(2)}×). ` +
          `The process's CPU per request (from /proc, the measured ${SECONDS} s only): service ${micros(svc.cpuUs)}, ceiling ${micros(ceil.cpuUs)}${db}.`,
        table('Service, by where the code lives:', svc.buckets, svc.busy, 14),
        table('Service, top functions (self time):', svc.functions, svc.busy, 15),
        table('Ceiling, by where the code lives:', ceil.buckets, ceil.busy, 8),
      )
    }
    const doc = [
      '# Profiles',
      '',
      'Written by `npm run profile` (scripts/bench/profile.mjs). Do not edit by hand: run it again.',
      'What the figures mean, and what they say about the targets docs/performance.md misses, is in',
      'docs/performance.md, "Where the time goes".',
      '',
      `- **Command:** \`${commandLine().replace(/(npm run bench|scripts\/bench\.sh)$/, 'npm run profile')}\``,
      `- **Service:** commit ${commit()}, run from \`dist/\``,
      `- **Date:** ${started.toISOString()}; load average ${load0.map((l) => l.toFixed(2)).join(' ')} at the start`,
      `- **Machine:** ${describeMachine(machine(load0))}`,
      `- **Database:** ${database.describe}`,
      `- **Method:** each point on a fresh process started with \`node --cpu-prof\`, 2 s of warm-up, then ${SECONDS} s of wrk; ` +
        'ACCESS_LOG=api. Shares are of the process\'s busy (not idle) samples over its whole life, self time only. ' +
        '"native: writev" and "native: writeLatin1String" are the socket writes: the system call, and with it the ' +
        'kernel\'s loopback delivery to wrk. One round on a noisy 2-core machine: the ratios move by ±10% from run ' +
        'to run (docs/performance.md has the medians), the shares much less.',
      '',
      ...sections.map((s) => s + '\n'),
    ].join('\n')
    // A subset of the points is a look during work, not the record.
    if (ONLY === undefined) writeFileSync(join(ROOT, 'docs', 'profile.md'), doc)
    say(doc)
    say(`profiles: ${tmp}`)
  } finally {
    await stopAll()
    await database.cleanup()
  }
}

await main()
