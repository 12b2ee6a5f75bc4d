// The table of `npm run bench`, as data: each row names the point it reads, what it picks of each
// round's result, the ceiling it is compared with (ratio within the round) and its target.
import { ARGON2, BURST, C_API, C_LOGIN, STORM } from './options.mjs'
import { WHY } from './findings.mjs'
import { median } from './lib.mjs'

const rps = (r) => r.rps
const p50 = (r) => r.p50_us
const p99 = (r) => r.p99_us
const cpu = (r) => r.cpu_us

/** A throughput ratio of at least `min`; a latency ratio of at most `max`; a median below `us`. */
const atLeast = (min) => ({ target: `≥ ${min.toFixed(2)}× ceiling`, met: (row) => median(row.ratios) >= min })
const atMost = (max) => ({ target: `p99 ≤ ${max}× the ceiling's`, met: (row) => median(row.ratios) <= max })
const below = (us, text) => ({ target: text, met: (row) => median(row.values) < us })

/**
 * Row specs. `of`: the point; `pick`; `vs`: the ceiling point (a ratio per round); `per`: instead,
 * a ratio row of `of` ÷ `per` in the same round, met at ≥ `min`; `expect404`: its answers are
 * 404s by design; `why`: where the time goes, printed when the target is missed (findings.mjs).
 */
export function rowSpecs({ large }) {
  const S_CEIL = 'Ceilings'
  const S_RED = 'Redirects, 1k links'
  const S_LAT = 'Redirect latency at light load (8 connections, hot)'
  const S_API = `API, 1 worker, ${C_API} connections (ceiling: the least SQL, one statement)`
  const S_BIG = 'Redirects, 1M links'
  const S_KDF = 'Password KDF: one hash alone on one thread (median of 5)'
  const api = (op, label) => [
    { section: S_API, figure: label, unit: 'rps', of: op, pick: rps, vs: `ceil_${op}`, ...atLeast(0.7), why: WHY.api },
    { section: S_API, figure: `${label} p99`, unit: 'us', of: op, pick: p99, vs: `ceil_${op}` },
  ]
  return [
    { section: S_CEIL, figure: 'nginx `return 302` from a map, 1 worker', unit: 'rps', of: 'nginx', pick: rps },
    { section: S_CEIL, figure: 'node:http 302 from a Map, 1 process (ratio: to nginx)', unit: 'rps', of: 'ceil_node1_vs_nginx', pick: rps, vs: 'nginx' },
    { section: S_CEIL, figure: 'node:http 302 from a Map, 2-process cluster', unit: 'rps', of: 'ceil_hot2', pick: rps },
    { section: S_CEIL, figure: 'cached redirect (the service, its default ACCESS_LOG) ÷ nginx, same round', of: 'hot1_vs_nginx', per: 'nginx', pick: rps, min: 0.5, target: '≥ 0.50 (issue 34)', why: WHY.nginx },

    { section: S_RED, figure: 'hot redirect, 1 worker, ACCESS_LOG=api', unit: 'rps', of: 'hot1_api', pick: rps, vs: 'ceil_hot1', ...atLeast(0.9), why: WHY.hotApi },
    { section: S_RED, figure: 'hot redirect, 1 worker, ACCESS_LOG=all (the default)', unit: 'rps', of: 'hot1', pick: rps, vs: 'ceil_hot1', ...atLeast(0.85), why: WHY.hotAll },
    { section: S_RED, figure: 'hot redirect, 2 workers, ACCESS_LOG=api', unit: 'rps', of: 'hot2', pick: rps, vs: 'ceil_hot2', ...atLeast(0.9), missing: 'not run: WORKERS > 1 needs PostgreSQL (BENCH_ADMIN_URL)', why: WHY.hot2 },
    { section: S_RED, figure: 'unknown codes (404), 1 worker, ACCESS_LOG=api', unit: 'rps', of: 'unknown', pick: rps, vs: 'ceil_unknown', expect404: true },
    { section: S_RED, figure: 'unknown codes ÷ hot redirect (same service, same round)', of: 'unknown', per: 'hot1_api', pick: rps, min: 0.95, target: '≥ 0.95', why: WHY.unknown },
    { section: S_RED, figure: 'hot redirect with METRICS_PORT set ÷ unset (same round)', of: 'metrics_on', per: 'metrics_off', pick: rps, min: 0.97, target: '≥ 0.97 (prom-client costs at most 3%)', why: WHY.metrics },
    { section: S_RED, figure: 'hot redirect of a capped link (max_visits), ACCESS_LOG=api', unit: 'rps', of: 'capped', pick: rps },
    { section: S_RED, figure: 'hot redirect of a capped link p99', unit: 'us', of: 'capped', pick: p99, vs: 'plain_vs_capped' },
    { section: S_RED, figure: 'capped ÷ plain link (same service, same round)', of: 'capped', per: 'plain_vs_capped', pick: rps, min: 0.8, target: '≥ 0.80 (issue 34)', why: WHY.capped },
    { section: S_RED, figure: 'hot redirect of a link with 3 rules (none matching), ACCESS_LOG=api', unit: 'rps', of: 'ruled', pick: rps },
    { section: S_RED, figure: 'hot redirect of a link with 3 rules p99', unit: 'us', of: 'ruled', pick: p99, vs: 'plain_vs_ruled' },
    { section: S_RED, figure: '3 rules ÷ plain link (same service, same round)', of: 'ruled', per: 'plain_vs_ruled', pick: rps, min: 0.9, target: '≥ 0.9 (issue 25)' },
    { section: S_RED, figure: 'a link with 3 rules: a new User-Agent on every visit ÷ 256 agents repeated (same round)', of: 'ruled_campaign', per: 'ruled_agents', pick: rps, notes: ['wrk builds each forged request anew, which costs the load generator more than the repeated ones: a floor, not the service alone'] },
    { section: S_RED, figure: 'hot redirect, browser-like requests, VISIT_STATS=on', unit: 'rps', of: 'stats_on', pick: rps },
    { section: S_RED, figure: 'browser-like requests, VISIT_STATS=on, ÷ node:http answering them from a Map', unit: 'rps', of: 'stats_on', pick: rps, vs: 'ceil_stats', ...atLeast(0.75), why: WHY.statsCeiling },
    { section: S_RED, figure: 'the same with ACCESS_LOG=api (no line per redirect), ÷ node:http', unit: 'rps', of: 'stats_api', pick: rps, vs: 'ceil_stats' },
    { section: S_RED, figure: 'browser-like, VISIT_STATS=on ÷ off (same round)', of: 'stats_on', per: 'stats_off', pick: rps, min: 0.9, target: '≥ 0.90 (issue 34)', why: WHY.statsRatio },
    { section: S_RED, figure: 'the same as CPU time: service CPU per redirect, off ÷ on (same round)', of: 'stats_off', per: 'stats_on', pick: cpu, min: 0.9, target: '≥ 0.90 (issue 34)', why: WHY.statsRatio },

    { section: S_LAT, figure: 'p50', unit: 'us', of: 'light', pick: p50, vs: 'ceil_light' },
    { section: S_LAT, figure: 'p99', unit: 'us', of: 'light', pick: p99, vs: 'ceil_light', ...atMost(1.5), why: WHY.p99 },
    { section: S_LAT, figure: `p99 while ${STORM} logins run without pause`, unit: 'us', of: 'storm', pick: p99, vs: 'ceil_light', ...below(5_000, '< 5 ms'), why: WHY.storm },
    { section: S_LAT, figure: `p99 during a burst of ${BURST} logins`, unit: 'us', of: 'burst', pick: p99, vs: 'ceil_light', ...below(10_000, '< 10 ms'), why: WHY.burst },
    { section: S_LAT, figure: 'slowest redirect during the burst', unit: 'us', of: 'burst', pick: (r) => r.max_us, ...below(1_000_000, '< 1 s') },

    ...api('create', 'create link'),
    ...api('list', 'list links (50 each)'),
    ...api('patch', 'patch link'),
    ...api('delete', 'delete link'),
    { section: S_API, figure: `login, ${C_LOGIN} connections (ceiling: argon2id on the same threads, no HTTP)`, unit: 'rps', of: 'login', pick: rps, vs: 'ceil_argon2', ...atLeast(0.8) },
    { section: S_API, figure: 'login p99', unit: 'us', of: 'login', pick: p99, vs: 'ceil_argon2' },

    { section: S_KDF, figure: 'scrypt N=2^16, r=8, p=1 (node:crypto; the previous release)', unit: 'us', of: 'kdf', pick: (r) => r.scrypt16_us, notes: ['64 MiB'] },
    { section: S_KDF, figure: "scrypt N=2^17, r=8, p=1 (node:crypto; OWASP's scrypt setting)", unit: 'us', of: 'kdf', pick: (r) => r.scrypt17_us, notes: ['128 MiB'] },
    { section: S_KDF, figure: `argon2id m=${ARGON2.memoryKiB} KiB, t=${ARGON2.iterations}, p=1 (@noble/hashes; this release)`, unit: 'us', of: 'kdf', pick: (r) => r.argon2id_us, notes: [`${(ARGON2.memoryKiB / 1024).toFixed(0)} MiB`] },

    { section: S_BIG, figure: 'hot redirect, 1k of 1M links', unit: 'rps', of: 'hot1m', pick: rps, vs: 'ceil_hot1m', missing: 'not run: BENCH_LARGE=1 adds it' },
    { section: S_BIG, figure: `cold redirect, all 1M links walked (cache holds ~${large?.cacheEntries.toLocaleString('en-US') ?? '?'})`, unit: 'rps', of: 'cold', pick: rps, vs: 'ceil_cold', ...atLeast(0.4), why: WHY.cold },
    { section: S_BIG, figure: 'cold redirect p99', unit: 'us', of: 'cold', pick: p99, vs: 'ceil_cold', ...below(10_000, '< 10 ms'), why: WHY.coldP99 },
  ]
}

/** The rows of the points that ran, from the results (key → one result per round). */
export function buildRows(specs, results) {
  const rows = []
  for (const spec of specs) {
    const of = results[spec.of]
    const notes = [...(spec.notes ?? [])]
    if (of === undefined) {
      if (spec.missing) rows.push({ section: spec.section, figure: spec.figure, unit: spec.unit, values: [], notes: [spec.missing] })
      continue
    }
    if (spec.per !== undefined) {
      const per = results[spec.per]
      if (per === undefined) continue
      const ratios = of.map((r, i) => spec.pick(r) / spec.pick(per[i]))
      rows.push({ section: spec.section, figure: spec.figure, unit: 'ratio', values: ratios, target: spec.target, met: spec.min === undefined ? undefined : median(ratios) >= spec.min, why: spec.why, notes })
      continue
    }
    const row = { section: spec.section, figure: spec.figure, unit: spec.unit, why: spec.why, values: of.map(spec.pick), notes: [...notes, ...errorsOf(of, spec.expect404)] }
    const ceiling = spec.vs === undefined ? undefined : results[spec.vs]
    if (ceiling !== undefined) {
      row.ceiling = ceiling.map(spec.pick)
      row.ratios = of.map((r, i) => spec.pick(r) / spec.pick(ceiling[i]))
      row.ratioKind = spec.unit === 'us' ? 'latency' : 'throughput'
    } else if (spec.vs !== undefined) row.notes.push('its ceiling did not run (the API ceiling needs PostgreSQL)')
    if (spec.met !== undefined && (row.ratios !== undefined || spec.vs === undefined || spec.target.startsWith('<'))) {
      row.target = spec.target
      row.met = spec.met(row)
    }
    rows.push(row)
  }
  return rows
}

/** Rows that read more than one figure of a point: the logins under load, and the 1M set's hot ratio. */
export function extraRows(results, rows) {
  const out = []
  const S_LAT = 'Redirect latency at light load (8 connections, hot)'
  if (results.storm) {
    const storm = results.storm.map((r) => r.storm)
    const failed = storm.reduce((a, s) => a + s.status_errors + s.socket_errors, 0)
    out.push({ section: S_LAT, figure: `logins completed during the storm (argon2id m=${ARGON2.memoryKiB} KiB, t=${ARGON2.iterations})`, unit: 'lps', values: storm.map((s) => s.rps), notes: failed ? [`${failed} logins failed`] : [] })
  }
  if (results.burst) {
    const bursts = results.burst.map((r) => r.burst)
    const only200And401 = bursts.every((b) => Object.keys(b.statuses).every((s) => s === '200' || s === '401'))
    out.push({
      section: S_LAT,
      figure: `the burst's ${BURST} logins (${BURST} addresses, half unknown): slowest answer`,
      unit: 'us',
      values: bursts.map((b) => b.slowestMs * 1000),
      target: 'only 200 and 401, each within 30 s',
      met: only200And401 && bursts.every((b) => b.slowestMs < 30_000),
      notes: bursts.map((b, i) => `round ${i + 1}: ${Object.entries(b.statuses).map(([st, n]) => `${n} × ${st}`).join(', ')}`),
    })
  }
  const hot1m = rows.find((r) => r.figure === 'hot redirect, 1k of 1M links')
  const hot1 = rows.find((r) => r.figure === 'hot redirect, 1 worker, ACCESS_LOG=all (the default)')
  if (hot1m?.ratios && hot1?.ratios) {
    const rel = median(hot1m.ratios) / median(hot1.ratios)
    Object.assign(hot1m, { target: 'ratio ≥ 0.90× the 1k set’s', met: rel >= 0.9 })
    hot1m.notes.push(`ratio ÷ the 1k set's (ACCESS_LOG=all) = ${rel.toFixed(2)}`)
  }
  return out
}

function errorsOf(results, expect404 = false) {
  let status = 0
  let socket = 0
  let requests = 0
  for (const r of results) {
    requests += r.requests ?? 0
    status += expect404 ? (r.requests ?? 0) - (r.status_errors ?? 0) : (r.status_errors ?? 0)
    socket += r.socket_errors ?? 0
  }
  const notes = []
  if (status) notes.push(`${status} of ${requests} answers had an unexpected status`)
  if (socket) notes.push(`${socket} socket errors or timeouts`)
  return notes
}
