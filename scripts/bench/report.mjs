// The table `npm run bench` prints, and docs/performance.md around it.
import { max, median, min } from './lib.mjs'

const int = (n) => Math.round(n).toLocaleString('en-US')

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
  for (const r of rows) if (r.met === false) out.push(`${r.section}: ${r.figure} (target ${r.target})`)
  for (const m of memory) if (m.target !== undefined && m.bytes >= m.target) out.push(`${m.figure}: ${(m.bytes / 2 ** 20).toFixed(1)} MB (target < ${m.target / 2 ** 20} MB)`)
  return out
}

export function renderDoc({ table, missed, started, finished, dev, command, machine, database, settings: s, visitCheck, commit }) {
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
- **Service settings:** ACCESS_LOG=${s.ACCESS_LOG} (${{ all: 'the default: a log line per request, redirects included, to a file', api: 'no log line per redirect; API requests logged', off: 'no access log' }[s.ACCESS_LOG]}), TRUST_PROXY=127.0.0.1
  (so each login can carry its own X-Forwarded-For), ARGON2_MEMORY_KIB=${s.ARGON2.memoryKiB}, ARGON2_ITERATIONS=${s.ARGON2.iterations}, KDF_THREADS=${s.KDF_THREADS} (the default here), visit counting on
  (VISIT_FLUSH_MS=${s.visitFlushMs}), CACHE_MAX_BYTES=${mib(s.defaultCacheBytes)} (the default) except on the 1M set,
  NEGATIVE_CACHE_MS=${s.negativeCacheMs}; everything else at its default
- **Visit counting check:** ${int(visitCheck.recorded)} visits recorded in the database by the 1-worker service;
  wrk counted ${int(visitCheck.counted)} redirects from it (the few in flight when wrk stops are served, and counted
  by the service, but not by wrk)

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
  service's JSON body otherwise): no routing, validation, logging or database. Run as one process,
  and as a 2-process \`node:cluster\` for the 2-worker point. nginx${s.nginx ? '' : ' (not installed or did not start here: skipped)'}: \`return 302\`
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
- **Hot redirect.** \`GET /r/{code}\` over the 1,000 existing codes in turn, ${s.C_THROUGHPUT} connections, after a warm-up
  that fills the redirect cache: every answer is a 302 from the cache, and every one is counted as
  a visit (flushed to the database every ${s.visitFlushMs} ms). With 2 workers, each worker has its own cache.
  ${s.twoWorkers ? `*${s.twoWorkers}.*` : ''}
- **Visit statistics (issue 10).** Hot redirects as above, but with browser-like requests (wrk's
  \`visit\` mode): a Chrome User-Agent, a Referer from 8 hosts, an X-Forwarded-For from 256
  addresses; 4,096 distinct requests over the 1,000 links, so each flush classifies them as
  humans, counts referrer hosts and hashes a few thousand distinct visitors. The same requests go
  to a second service on the same database with VISIT_STATS=off (totals only); "on ÷ off"
  compares the two within each round, target ≥ 0.97. As throughput moves with whatever else
  the machine runs, the service's own CPU time per redirect (user + system, read from /proc
  around each point, the flush after it included) is compared too, as off ÷ on.
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
- **Create link.** \`POST /api/v1/links\` with a bearer token, rotating over the empty accounts so no
  account meets the 50-link cap; ${s.C_API} connections. **List links:** \`GET /api/v1/links\`, rotating
  over the ${s.OWNERS} accounts that have 50 links each; ${s.C_API} connections. Both are ratios to the
  node:http ceiling at the same connections: what fraction of a bare answer an authenticated
  database request costs. **Login:** \`POST /api/v1/auth/login\`, valid credentials,
  ${s.C_LOGIN} connections, a ratio to the argon2id ceiling at the same concurrency (target ≥ 0.8).
- **Cold redirect (1M links, opt-in with BENCH_LARGE=1).** ${s.large ? `${int(s.large.total)} links in the database (1,000,000 seeded, in ${s.large.seedSeconds.toFixed(0)} s, plus those the create-link point made);` : 'Not run this time;'}
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

## Running it

\`\`\`sh
npm run bench                                   # embedded database, 1k links, about 10 minutes
BENCH_ADMIN_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench   # PostgreSQL: fresh bench_* database, dropped after
BENCH_LARGE=1 BENCH_ADMIN_URL=... npm run bench # adds the 1M-link set: about 3 minutes more
\`\`\`

Options: BENCH_SECONDS (per point, default 10, at most 15), BENCH_ROUNDS (default 3),
BENCH_LARGE=1, BENCH_DATABASE_URL (an empty database to fill and leave), BENCH_ADMIN_URL (creates
and drops a fresh one), BENCH_ARGON2_MEMORY_KIB and BENCH_ARGON2_ITERATIONS (default: the service's),
BENCH_ONLY=logins (only the login points, printed, docs/performance.md left alone), BENCH_ACCESS_LOG (default:
the service's, all), BENCH_KEEP=1 (keep the temporary directory with the logs). It needs wrk (\`apt-get install
wrk\`), and uses nginx for one more ceiling when it is installed (\`apt-get install nginx-light\`).
It builds \`dist/\` only when \`src/\` is newer, and stops every process it started on the way out,
Ctrl-C included.
`
}
