// The table `npm run bench` prints, and docs/performance.md around it.
import { execFileSync, spawnSync } from 'node:child_process'
import os from 'node:os'
import { max, median, min, ROOT } from './lib.mjs'

const int = (n) => Math.round(n).toLocaleString('en-US')

// The record-size set's section is written by scripts/bench/huge.mjs (an hour and more, not part of
// `npm run bench`) between these markers; a run of `npm run bench` keeps it as it was.
const RECORD_START = '<!-- record-size: written by scripts/bench/huge.mjs -->'
const RECORD_END = '<!-- /record-size -->'
const NO_RECORD = `## The record-size set

Not measured yet: \`BENCH_HUGE=1 npm run bench\` (scripts/bench/huge.mjs) writes this section.`

/** The record-size section of a performance.md as it stands (with its markers), or the placeholder. */
export function keptRecordSize(doc) {
  const a = doc?.indexOf(RECORD_START) ?? -1
  const b = doc?.indexOf(RECORD_END) ?? -1
  return a >= 0 && b > a ? doc.slice(a, b + RECORD_END.length) : `${RECORD_START}\n${NO_RECORD}\n${RECORD_END}`
}

/** The document with its record-size section replaced by `section` (markdown, without markers). */
export function withRecordSize(doc, section) {
  const block = `${RECORD_START}\n${section.trim()}\n${RECORD_END}`
  const a = doc.indexOf(RECORD_START)
  const b = doc.indexOf(RECORD_END)
  if (a >= 0 && b > a) return doc.slice(0, a) + block + doc.slice(b + RECORD_END.length)
  // A document written before the markers: its old section, or none, goes before "Running it".
  const old = /## The record-size set\n[\s\S]*?(?=## Running it)/
  return old.test(doc) ? doc.replace(old, () => `${block}\n\n`) : doc.replace('## Running it', () => `${block}\n\n## Running it`)
}

function fmt(unit, v) {
  if (!Number.isFinite(v)) return '—'
  switch (unit) {
    case 'rps':
      return `${int(v)}/s`
    case 'lps':
      return `${v.toFixed(1)}/s`
    case 'us':
      return v >= 10_000 ? `${(v / 1000).toFixed(0)} ms` : v >= 1_000 ? `${(v / 1000).toFixed(1)} ms` : `${(v / 1000).toFixed(2)} ms`
    case 'ratio':
      return v.toFixed(2)
    default:
      return String(v)
  }
}

function range(unit, values) {
  if (values.length < 2) return '—'
  const a = fmt(unit, min(values))
  const b = fmt(unit, max(values))
  return `${a.replace(/\/s$|\s?ms$/, '')}–${b}`
}

function ratioCell(r) {
  if (r.ratios === undefined || r.ratios.length === 0) return '—'
  const m = median(r.ratios)
  const text = r.ratioKind === 'latency' ? `${m.toFixed(1)}×` : m.toFixed(2)
  if (r.ratios.length < 2) return text
  const lo = min(r.ratios)
  const hi = max(r.ratios)
  return r.ratioKind === 'latency' ? `${text} (${lo.toFixed(1)}–${hi.toFixed(1)})` : `${text} (${lo.toFixed(2)}–${hi.toFixed(2)})`
}

const verdict = (r) => (r.met === undefined ? '' : r.met ? 'met' : '**missed**')
const esc = (s) => String(s).replace(/\|/g, '\\|')

export function renderTable(rows, memory) {
  const lines = [
    '| Figure | Median | Min–max | Ceiling (median) | Ratio to ceiling (min–max) | Target | Verdict | Notes |',
    '| --- | ---: | ---: | ---: | ---: | --- | --- | --- |',
  ]
  let section
  for (const r of rows) {
    if (r.section !== section) {
      section = r.section
      lines.push(`| **${esc(section)}** | | | | | | | |`)
    }
    if (r.values.length === 0) {
      lines.push(`| ${esc(r.figure)} | — | — | — | — | ${esc(r.target ?? '')} | | ${esc(r.notes.join('; '))} |`)
      continue
    }
    lines.push(
      '| ' +
        [
          esc(r.figure),
          fmt(r.unit, median(r.values)),
          range(r.unit, r.values),
          r.ceiling ? fmt(r.unit, median(r.ceiling)) : '—',
          ratioCell(r),
          esc(r.target ?? ''),
          verdict(r),
          esc(r.notes.join('; ')),
        ].join(' | ') +
        ' |',
    )
  }
  if (memory.length > 0) {
    lines.push('| **Memory (VmRSS from /proc, summed over the process tree)** | | | | | | | |')
    for (const m of memory) {
      const met = m.target === undefined ? undefined : m.bytes < m.target
      lines.push(
        `| ${esc(m.figure)} | ${(m.bytes / 2 ** 20).toFixed(1)} MB | — | — | — | ${m.target ? `< ${m.target / 2 ** 20} MB` : ''} | ${verdict({ met })} | ${esc((m.notes ?? []).join('; '))} |`,
      )
    }
  }
  return lines.join('\n')
}

export function misses(rows, memory) {
  const out = []
  const why = (r) => (r.why === undefined ? '' : `\n\n  *Where the time goes:* ${r.why}\n`)
  for (const r of rows) if (r.met === false) out.push(`${r.section}: ${r.figure} (target ${r.target})${why(r)}`)
  for (const m of memory) if (m.target !== undefined && m.bytes >= m.target) out.push(`${m.figure}: ${(m.bytes / 2 ** 20).toFixed(1)} MB (target < ${m.target / 2 ** 20} MB)${why(m)}`)
  return out
}

export function renderDoc({ table, missed, started, finished, command, machine, database, settings: s, visitCheck, commit, recordSize }) {
  const dev = s.DEV_RUN
  const minutes = ((finished - started) / 60_000).toFixed(1)
  const mib = (b) => `${b / 2 ** 20} MiB`
  const devBanner = dev
    ? `> **Development run.** ${s.SECONDS} s per point and ${s.ROUNDS} round(s), on a machine shared with other work:
> the figures below show that the benchmark runs, not how fast the service is. Do not quote them.
> The real run is \`npm run bench\` with the defaults (10 s, 3 rounds) on a quiet machine.

`
    : ''
  return `# Performance

Written by \`npm run bench\` (scripts/bench.sh, scripts/bench/). Do not edit by hand: run it again.

${devBanner}## This run

- **Command:** \`${command}\`
- **Date:** ${started.toISOString()} – ${finished.toISOString()} (${minutes} min)
- **Service:** commit ${commit}, run from \`dist/\` as \`node dist/server.js\`
- **Database:** ${database}
- **Machine:** ${machine.cores} cores (${machine.cpu}), ${machine.memory} memory, ${machine.kernel}
- **Software:** Node ${machine.node}; ${machine.wrk}; ${machine.nginx}
- **Load average:** ${machine.load}
- **Rounds:** ${s.ROUNDS} × ${s.SECONDS} s per point, after a ${s.WARM_SECONDS} s warm-up (not counted) of each point but the logins and the KDF ceiling
- **Service settings:** ACCESS_LOG=${s.ACCESS_LOG} (${{ all: 'the default: a log line per request, redirects included, to a file', api: 'no log line per redirect; API requests logged', off: 'no access log' }[s.ACCESS_LOG]}) unless a row names another, TRUST_PROXY=127.0.0.1
  (so each login can carry its own X-Forwarded-For), ARGON2_MEMORY_KIB=${s.ARGON2.memoryKiB}, ARGON2_ITERATIONS=${s.ARGON2.iterations}, KDF_THREADS=${s.KDF_THREADS} (the default here), visit counting on
  (VISIT_FLUSH_MS=${s.visitFlushMs}), CACHE_MAX_BYTES=${mib(s.defaultCacheBytes)} (the default) except on the 1M set,
  NEGATIVE_CACHE_MS=${s.negativeCacheMs}; everything else at its default
- **Visit counting check:** ${visitCheck ? `${int(visitCheck.recorded)} visits recorded in the database by the services;
  wrk counted ${int(visitCheck.counted)} redirects from them (the few in flight when wrk stops are served, and counted
  by the service, but not by wrk)` : 'not made: on the embedded database each service counts into its own copy'}

## Results

${table}
${missed.length ? `\nTargets missed in this run${dev ? ' (a development run: noisy)' : ''}:\n\n${missed.map((m) => `- ${m}`).join('\n')}\n` : `\nEvery target with a verdict was met in this run.\n`}
## How to read this

The machine is noisy: the same setup drifts by up to 1.9× within minutes, so no absolute figure
here means much on its own. Each figure is measured next to a *ceiling*, the same load against a
server that does the least possible work, and the two are run back to back within each round
(the order flips every other round, so a drift favours neither). **Median** and **min–max** are
over the rounds. The **ratio** is taken within each round, point ÷ its ceiling, and its median
and min–max over the rounds are shown: for throughput (req/s) 1.00 means as fast as the ceiling
and the target ratios are floors; for latency rows it is the point's latency ÷ the ceiling's at
the same load (1.0× = as quick, higher is slower). The absolute latency targets (p99 < 1 ms,
< 5 ms) are checked on the median figure. A verdict of **missed** is a finding to work on, not a
failure of the benchmark. Errors (status above 399 where none is expected, socket errors,
timeouts) are counted and shown in Notes; a point with errors should not be trusted.

The load generator, wrk (one thread, \`-t1\`), runs on the same ${machine.cores} cores as the server. A 1-process server
and wrk each get about a core; the 2-process points (the cluster ceiling and WORKERS=2) share
both cores with wrk, so their figures understate what two workers do on a machine of their own,
and the ratio between them is what to look at. wrk is closed-loop: each connection sends its
next request when the previous answer arrives, so "8 connections" is 8 requests in flight, not a
fixed request rate.

## What each figure measures

- **Ceilings.** \`scripts/bench/ceiling.mjs\`: a bare \`node:http\` server that answers
  \`GET /r/{code}\` with 302 and the Location from a \`Map\` holding the same links (404 with the
  service's JSON body otherwise): no routing, validation, logging or database. It sends the
  headers the contract puts on every answer (\`Cache-Control: no-store\`, an \`X-Request-Id\` of 32
  random hex characters, \`X-Content-Type-Options: nosniff\`), so that both servers send the same
  bytes: before issue 13 it sent a shorter answer, which alone is worth about 5% of its rate. Run
  as one process, and as a 2-process \`node:cluster\` for the 2-worker point. **API ceiling**
  (\`scripts/bench/api-ceiling.mjs\`, PostgreSQL only: it shares the service's database): a bare
  \`node:http\` + \`postgres\` server that answers create, list, patch and delete with one
  statement each, which checks the bearer session and does the work (and notifies other nodes,
  as the operation must): the least SQL each operation needs. It skips what the service must
  also do: the 50-link cap, validation, the rate limit, the session cache, the time limit. nginx${s.nginx ? '' : ' (not installed or did not start here: skipped)'}: \`return 302\`
  with the Location from a \`map\` of the same links, one worker process, access log off, shown
  as a reference for what \`node:http\` itself costs. The login's ceiling is
  \`scripts/bench/argon2.mjs\`: argon2id with the service's parameters (m = ${s.ARGON2.memoryKiB} KiB, t = ${s.ARGON2.iterations},
  p = 1) on the service's own KDF pool with as many threads (${s.KDF_THREADS}), ${s.C_LOGIN} derivations always in flight: the
  logins a second the hashing alone allows, without HTTP or the database.
- **Links.** ${s.OWNERS} accounts with 50 links each (the service's per-account cap) make the 1k set;
  ${int(s.CREATORS)} accounts with no links (and a session each) take the link creations. Rows go
  straight into the tables by SQL, after the service has created the schema with its own
  migrations. Codes are 8 Base62 characters, deterministic; URLs are about ${s.urlBytes} bytes. wrk's Lua
  script (\`scripts/bench/bench.lua\`) walks the list of codes, one after the other, not one URL.
- **Hot redirect.** Measured twice: on a service with \`ACCESS_LOG=api\` (no line per redirect) and
  on one with the default \`ACCESS_LOG=all\` (a JSON line per redirect, to a file), both against
  the same ceiling in the same round. **Metrics:** the default service against one with
  \`METRICS_PORT\` set (Prometheus counters and a histogram observation per request), same round.
  \`GET /r/{code}\` over the 1,000 existing codes in turn, ${s.C_THROUGHPUT} connections, after a warm-up
  that fills the redirect cache: every answer is a 302 from the cache, and every one is counted as
  a visit (flushed to the database every ${s.visitFlushMs} ms). With 2 workers, each worker has its own cache.
  ${s.postgres ? '' : '*Not run with 2 workers here: WORKERS > 1 needs PostgreSQL.*'}
- **Visit statistics (issue 10).** Hot redirects as above, but with browser-like requests (wrk's
  \`visit\` mode): a User-Agent of 8 families (phones, tablets, desktops; 256 distinct strings),
  a Referer from 8 hosts, an X-Forwarded-For from 256 public addresses; 4,096 distinct requests
  over the 1,000 links, so each flush classifies them as humans, counts referrer hosts, hashes a
  few thousand distinct visitors and breaks them down by device, browser, OS and country. The same requests go
  to a second service on the same database with VISIT_STATS=off (totals only); "on ÷ off"
  compares the two within each round, target ≥ 0.90 (issue 34). As throughput moves with whatever else
  the machine runs, the service's own CPU time per redirect (user + system, read from /proc
  around each point, the flush after it included) is compared too, as off ÷ on. A third service,
  with statistics on and ACCESS_LOG=api, takes the same requests, to show what the default's
  access line costs on this path; the ceiling is the node:http server answering them from its Map.
- **Unknown codes.** 1,000 well-formed codes that no link has, in turn, ${s.C_THROUGHPUT} connections: each is
  read from the database once, then answered 404 from the cache's negative entries until they
  expire (NEGATIVE_CACHE_MS=${s.negativeCacheMs}). "Unknown ÷ hot" compares the two within each round.
- **Latency at light load.** Hot redirects with ${s.C_LIGHT} connections: p50 and p99 as wrk records them
  (send to last byte of the answer). **During the login storm:** the same, while a second wrk keeps
  ${s.STORM} logins in flight without pause (valid credentials, a random
  X-Forwarded-For each so the 5/s per-client rate limit does not refuse them, argon2id at
  m = ${s.ARGON2.memoryKiB} KiB, t = ${s.ARGON2.iterations}${s.ARGON2.memoryKiB === s.defaultArgon2.memoryKiB && s.ARGON2.iterations === s.defaultArgon2.iterations ? ', the service\'s default' : `, not the service's default m = ${s.defaultArgon2.memoryKiB} KiB, t = ${s.defaultArgon2.iterations}`}); the storm starts
  1.5 s before the measurement and ends 1.5 s after it. Logins completed shows how hard it pushed.
  **During a burst:** the same, while ${s.BURST} logins are sent at one moment 1 s into the measurement,
  each from its own address, half of them for unknown usernames (issue 9: only 200 and 401,
  redirects p99 under 10 ms and none slower than 1 s); the slowest redirect is wrk's maximum.
- **Create link.** \`POST /api/v1/links\` with a bearer token, rotating over empty accounts so no
  account meets the 50-link cap (the ceiling has accounts of its own). **List links:**
  \`GET /api/v1/links\`, rotating over the ${s.OWNERS} accounts that have 50 links each. **Patch:**
  \`PATCH /api/v1/links/{code}\` over those 1,000 links, each with its own url (so nothing changes
  for the other points). **Delete:** \`DELETE /api/v1/links/{code}\`, each of ${int(s.DOOMED * 50)} seeded
  links once (the ceiling deletes as many others). ${s.C_API} connections each, every one a ratio to
  its API ceiling at the same connections (target ≥ 0.7). The database round trips of each
  request are counted by a test, not here: see "Round trips" below. **Login:** \`POST /api/v1/auth/login\`, valid credentials,
  ${s.C_LOGIN} connections, a ratio to the argon2id ceiling at the same concurrency (target ≥ 0.8).
- **Cold redirect (1M links, opt-in with BENCH_LARGE=1).** ${s.large ? `${int(s.large.total)} links in the database (1,000,000 seeded, in ${s.large.seedSeconds.toFixed(0)} s, with the other points' links);` : 'Not run this time;'}
  the service runs with CACHE_MAX_BYTES=${mib(s.SMALL_CACHE_BYTES)}, which holds about
  ${s.large ? int(s.large.cacheEntries) : 'a few thousand'} links, and wrk walks all 1M codes in a shuffled order, each round
  its own stretch: nearly every request misses the cache and reads the database (whose own
  buffers and the OS page cache are warm: "cold" is the redirect cache). Its ceiling is the
  node:http server with all 1M links in its Map. **Hot on 1M links:** the same service, 1,000
  codes spread over the 1M, cache warm; its ratio is compared with the 1k set's.
- **Memory.** VmRSS of the service process (summed over the primary and workers for 2 workers),
  read from /proc one second after it is listening and again after its last load; VmHWM is the
  peak. With the embedded database, PGlite (PostgreSQL compiled to WebAssembly) runs inside the
  service process and its memory is part of the figure. The 1-worker service's end-of-load figure comes after the login points, whose argon2id
  derivations (${(s.ARGON2.memoryKiB / 1024).toFixed(0)} MiB each, ${s.KDF_THREADS} at a time on the KDF threads) are the biggest allocations.

## Round trips

Statements each request sends to the database, as \`test/http/round-trips.test.ts\` counts them
(the driver's count of statements, the fewest of a few tries):

| Request | Statements | Which |
| --- | ---: | --- |
| \`GET /r/{code}\`, cached (hit or known unknown) | 0 | |
| \`GET /r/{code}\`, not cached | 1 | the batched primary-key read (one statement for all misses of an event-loop turn) |
| \`POST /api/v1/links\` | 1 | \`create_link()\`: block list, owner lock, count, insert, NOTIFY (sql/0007_abuse_controls.sql) |
| \`GET /api/v1/links\`, \`GET /api/v1/links/{code}\`, \`GET /api/v1/users/me\` | 1 | one select |
| \`PATCH /api/v1/links/{code}\`, \`DELETE /api/v1/links/{code}\` | 1 | one update with its NOTIFY |
| any authenticated request whose session this node has not checked in \`SESSION_CACHE_MS\` | +1 | the session read (+1 more, once a minute, to move \`last_used_at\`) |

The rest are not on a hot path and keep their transactions: login is the rate limit (PostgreSQL),
the account read and the session insert; a password change or account deletion is its limit,
the hash read and one transaction.

${recordSize}

## Running it

\`\`\`sh
npm run bench                                   # embedded database, 1k links, about 20 minutes (no API ceilings, no 2 workers)
BENCH_ADMIN_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench   # PostgreSQL: fresh bench_* database, dropped after
BENCH_LARGE=1 BENCH_ADMIN_URL=... npm run bench # adds the 1M-link set: about 5 minutes more
BENCH_ADMIN_URL=... npm run profile             # where the CPU goes: docs/profile.md, about 5 minutes
npm run build && node scripts/bench/flush.mjs   # one visit flush with the breakdowns against VISIT_STATS=off
BENCH_HUGE=1 npm run bench                      # the record-size set (10M links): its section of this file, about 2 hours
BENCH_AB=f8aed4c npm run bench                  # the cached redirect against an older commit's and the ceiling, printed
ARMS='[...]' node scripts/bench/arms.mjs        # services differing in settings (env, node flags, where the log goes) against the ceiling, printed
\`\`\`

Options: BENCH_SECONDS (per point, default 10, at most 15), BENCH_ROUNDS (default 3),
BENCH_LARGE=1, BENCH_DATABASE_URL (an empty database to fill and leave), BENCH_ADMIN_URL (creates
and drops a fresh one), BENCH_ARGON2_MEMORY_KIB and BENCH_ARGON2_ITERATIONS (default: the service's),
BENCH_ONLY=logins or BENCH_ONLY=stats (only the login points, or only the visit statistics' points;
printed, docs/performance.md left alone), BENCH_ACCESS_LOG (default:
the service's, all), BENCH_KEEP=1 (keep the temporary directory with the logs). It needs wrk (\`apt-get install
wrk\`), and uses nginx for one more ceiling when it is installed (\`apt-get install nginx-light\`).
It builds \`dist/\` only when \`src/\` is newer, and stops every process it started on the way out,
Ctrl-C included.
`
}

export function commandLine() {
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

export function machine(load0) {
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

export function commit() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'sql'], { cwd: ROOT, encoding: 'utf8' }).trim()
    return dirty ? `${head} with uncommitted changes in src/ or sql/` : head
  } catch {
    return 'unknown'
  }
}
