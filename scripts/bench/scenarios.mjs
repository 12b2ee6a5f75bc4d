// What `npm run bench` measures, as data: the processes, and the groups of points run against
// them. A group's points run back to back in every round, the order reversed every other round,
// so that a drift in the machine's speed favours none; a ratio is taken within a round. The
// runner (run.mjs) starts the processes a group names, and stops each after the last group that
// needs it.
import { ACCESS_LOG, BURST, C_API, C_LIGHT, C_LOGIN, C_THROUGHPUT, LARGE, LARGE_TOTAL, PASSWORD, ROUNDS, SMALL_CACHE_BYTES, STORM } from './options.mjs'

/** wrk's redirect mode over a file of codes; each round (the warm-up is round ROUNDS) from its own line. */
const walk = (file, starts = (r) => (r * 137) % 1000) => (round) => ['redirect', file, String(starts(round)), '0']

/**
 * The processes, by name. `memory` names the RSS readings taken one second after the start and
 * at the stop. `pg`: only on PostgreSQL (the API ceiling shares the service's database; several
 * workers need it).
 */
export function processes(f) {
  const logLabel = { all: 'a JSON line per request', api: 'no line per redirect', off: 'no access log' }
  return {
    nginx: { kind: 'nginx', links: f.smallLinks },
    'node-1': { kind: 'ceiling', links: f.links1k },
    svc: { kind: 'service', env: {}, memory: { idle: 'RSS, 1 worker, idle after start', end: 'RSS, 1 worker, at the end of the load' }, label: `ACCESS_LOG=${ACCESS_LOG} (${logLabel[ACCESS_LOG]})` },
    'svc-api': { kind: 'service', env: { ACCESS_LOG: 'api' } },
    'svc-no-stats': { kind: 'service', env: { VISIT_STATS: 'off' } },
    'svc-metrics': { kind: 'service', env: { METRICS_PORT: '0' } },
    'api-ceiling': { kind: 'api-ceiling', pg: true },
    'node-2': { kind: 'ceiling', links: f.links1k, workers: 2, pg: true },
    'svc-2': { kind: 'service', env: { WORKERS: '2', ACCESS_LOG: 'api' }, pg: true, memory: { idle: 'RSS, 2 workers (primary and workers), idle', end: 'RSS, 2 workers (primary and workers), end of load' } },
    'node-1m': { kind: 'ceiling', links: f.big },
    'svc-1m': { kind: 'service', env: { CACHE_MAX_BYTES: String(SMALL_CACHE_BYTES) }, memory: { idle: 'RSS, 1 worker on 1M links (1 MiB cache), idle', end: 'RSS, 1 worker on 1M links (1 MiB cache), end of load' } },
  }
}

/**
 * The groups. An entry: key (the rows' name for it), label, on (a process), c (connections),
 * args (wrk's, or a function of the round); kind 'storm' | 'burst' | 'argon2' for the login
 * points; visits: its 302s are visits (checked against the database at the end); cpu: the
 * service's CPU time per request is read too; logins: run with BENCH_ONLY=logins.
 */
export function groups(f) {
  const hot = walk(f.links1k)
  const big = (r) => r * Math.floor(LARGE_TOTAL / (ROUNDS + 1))
  // The delete points take each link once: every round (and the warm-up) its own stretch.
  const doomedStretch = (n) => (r) => String(r * Math.floor(n / (ROUNDS + 1)))
  return [
    {
      title: 'ceilings: nginx and node:http, and the service against them, 1 process each, 64 connections',
      when: f.hasNginx,
      entries: [
        { key: 'nginx', label: 'nginx return 302', on: 'nginx', c: C_THROUGHPUT, args: hot },
        { key: 'ceil_node1_vs_nginx', label: 'node:http ceiling', on: 'node-1', c: C_THROUGHPUT, args: hot },
        { key: 'hot1_vs_nginx', label: `hot redirect, ACCESS_LOG=${ACCESS_LOG}`, on: 'svc', c: C_THROUGHPUT, args: hot, visits: true },
      ],
    },
    {
      title: 'redirects on 1k links, 1 worker, 64 connections',
      entries: [
        { key: 'ceil_hot1', label: 'node:http ceiling, 302', on: 'node-1', c: C_THROUGHPUT, args: hot },
        { key: 'hot1_api', label: 'hot redirect, ACCESS_LOG=api', on: 'svc-api', c: C_THROUGHPUT, args: hot, visits: true },
        { key: 'hot1', label: `hot redirect, ACCESS_LOG=${ACCESS_LOG}`, on: 'svc', c: C_THROUGHPUT, args: hot, visits: true },
        { key: 'ceil_unknown', label: 'node:http ceiling, 404', on: 'node-1', c: C_THROUGHPUT, args: walk(f.unknown1k) },
        { key: 'unknown', label: 'unknown codes (404), ACCESS_LOG=api', on: 'svc-api', c: C_THROUGHPUT, args: walk(f.unknown1k) },
      ],
    },
    {
      title: 'Prometheus metrics on the redirect path: hot redirect, 1 worker, 64 connections',
      entries: [
        { key: 'metrics_off', label: 'hot redirect, METRICS_PORT unset', on: 'svc', c: C_THROUGHPUT, args: hot, visits: true },
        { key: 'metrics_on', label: 'hot redirect, METRICS_PORT set', on: 'svc-metrics', c: C_THROUGHPUT, args: hot, visits: true },
      ],
    },
    {
      title: 'visit statistics on the redirect path: hot redirect, browser-like requests, 1 worker, 64 connections',
      stats: true,
      entries: [
        { key: 'ceil_stats', label: 'node:http ceiling, browser-like requests', on: 'node-1', c: C_THROUGHPUT, args: (r) => ['visit', f.links1k, String((r * 613) % 4096), '0'] },
        { key: 'stats_on', label: 'browser-like, VISIT_STATS=on', on: 'svc', c: C_THROUGHPUT, args: (r) => ['visit', f.links1k, String((r * 613) % 4096), '0'], visits: true, cpu: true },
        { key: 'stats_off', label: 'browser-like, VISIT_STATS=off', on: 'svc-no-stats', c: C_THROUGHPUT, args: (r) => ['visit', f.links1k, String((r * 613) % 4096), '0'], visits: true, cpu: true },
        { key: 'stats_api', label: 'browser-like, VISIT_STATS=on, ACCESS_LOG=api', on: 'svc-api', c: C_THROUGHPUT, args: (r) => ['visit', f.links1k, String((r * 613) % 4096), '0'], visits: true },
      ],
    },
    {
      title: 'link limits on the redirect path: a capped link (max_visits, a database take per GET) and a plain one, 1 worker, 64 connections',
      limits: true,
      entries: [
        { key: 'plain_vs_capped', label: 'hot redirect, no cap', on: 'svc-api', c: C_THROUGHPUT, args: hot, visits: true },
        { key: 'capped', label: 'hot redirect, max_visits set', on: 'svc-api', c: C_THROUGHPUT, args: walk(f.capped1k), visits: true },
      ],
    },
    {
      title: 'redirect rules on the redirect path: a link with 3 rules (device, language, country; none matching: the fallback) and a plain one, 1 worker, 64 connections',
      rules: true,
      entries: [
        { key: 'plain_vs_ruled', label: 'hot redirect, no rules', on: 'svc-api', c: C_THROUGHPUT, args: hot, visits: true },
        { key: 'ruled', label: 'hot redirect, 3 rules, none matching', on: 'svc-api', c: C_THROUGHPUT, args: walk(f.ruled1k), visits: true },
        // the device rule reads each User-Agent: remembered when agents repeat, parsed for each forged one
        { key: 'ruled_agents', label: 'browser-like visits (256 agents), 3 rules', on: 'svc-api', c: C_THROUGHPUT, args: (r) => ['visit', f.ruled1k, String((r * 613) % 4096), '0'], visits: true },
        { key: 'ruled_campaign', label: 'a new User-Agent on every visit, 3 rules', on: 'svc-api', c: C_THROUGHPUT, args: (r) => ['campaign', f.ruled1k, String((r * 137) % 1000), '0'], visits: true },
      ],
    },
    {
      title: 'redirect latency at light load: 8 connections, hot cache, 1 worker',
      logins: true,
      entries: [
        { key: 'ceil_light', label: 'node:http ceiling, 8 connections', on: 'node-1', c: C_LIGHT, args: hot },
        { key: 'light', label: 'hot redirect, 8 connections', on: 'svc', c: C_LIGHT, args: hot, visits: true },
        { key: 'storm', label: `8 connections during a ${STORM}-login storm`, on: 'svc', kind: 'storm', c: C_LIGHT, args: hot, warm: false, visits: true, logins: true },
        { key: 'burst', label: `8 connections during a burst of ${BURST} logins`, on: 'svc', kind: 'burst', c: C_LIGHT, args: hot, warm: false, visits: true, logins: true },
      ],
    },
    {
      title: `API, 1 worker, ${C_API} connections: each operation and its least-SQL ceiling; login (${C_LOGIN} connections)`,
      logins: true,
      entries: [
        { key: 'ceil_create', label: 'ceiling: create (one insert checking the session)', on: 'api-ceiling', c: C_API, args: ['create', f.ceilingCreatorTokens] },
        { key: 'create', label: 'create link', on: 'svc', c: C_API, args: ['create', f.creatorTokens] },
        { key: 'ceil_list', label: 'ceiling: list (one select)', on: 'api-ceiling', c: C_API, args: ['list', f.ownerTokens] },
        { key: 'list', label: 'list links (50 per account)', on: 'svc', c: C_API, args: ['list', f.ownerTokens] },
        { key: 'ceil_patch', label: 'ceiling: patch (one update)', on: 'api-ceiling', c: C_API, args: ['patch', f.patchFile] },
        { key: 'patch', label: 'patch link', on: 'svc', c: C_API, args: ['patch', f.patchFile] },
        { key: 'ceil_delete', label: 'ceiling: delete (one update)', on: 'api-ceiling', c: C_API, args: (r) => ['delete', f.doomedCeiling, doomedStretch(f.doomedCount)(r)] },
        { key: 'delete', label: 'delete link', on: 'svc', c: C_API, args: (r) => ['delete', f.doomedService, doomedStretch(f.doomedCount)(r)] },
        { key: 'ceil_argon2', label: "argon2id on the service's KDF threads", kind: 'argon2', warm: false, logins: true },
        { key: 'login', label: 'login', on: 'svc', c: C_LOGIN, args: ['login', 'owner1', PASSWORD], timeout: '60s', warm: false, logins: true },
      ],
    },
    {
      title: 'hot redirect on 1k links, 2 workers (node:cluster), 64 connections; wrk shares the 2 cores',
      entries: [
        { key: 'ceil_hot2', label: 'node:http ceiling, 2-process cluster', on: 'node-2', c: C_THROUGHPUT, args: hot },
        { key: 'hot2', label: 'hot redirect, 2 workers, ACCESS_LOG=api', on: 'svc-2', c: C_THROUGHPUT, args: hot, visits: true },
      ],
    },
    {
      title: `1M links, 1 worker, CACHE_MAX_BYTES=${SMALL_CACHE_BYTES}, 64 connections`,
      when: LARGE,
      entries: [
        { key: 'ceil_hot1m', label: 'node:http ceiling (1M-entry Map), hot 1k', on: 'node-1m', c: C_THROUGHPUT, args: walk(f.hot1m) },
        { key: 'hot1m', label: 'hot redirect, 1k of 1M links', on: 'svc-1m', c: C_THROUGHPUT, args: walk(f.hot1m), visits: true },
        { key: 'ceil_cold', label: 'node:http ceiling (1M-entry Map), all 1M', on: 'node-1m', c: C_THROUGHPUT, args: walk(f.cold, big) },
        { key: 'cold', label: 'cold redirect, walking all 1M links', on: 'svc-1m', c: C_THROUGHPUT, args: walk(f.cold, big), visits: true },
      ],
    },
  ]
}
