// The processes `npm run bench` measures: the service (node dist/server.js), the node:http
// ceilings (redirects, and the API's least SQL) and nginx. Each starts on a free port and logs to
// a file in the work directory.
import { execFileSync } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ACCESS_LOG, ARGON2 } from './options.mjs'
import { BENCH_DIR, freePort, sleep, spawnTracked, startLogged, stopChild } from './lib.mjs'

const CONFIG_KEYS = [
  'HOST', 'PORT', 'DATABASE_URL', 'DATA_DIR', 'BASE_URL', 'APP_URL', 'SESSION_TTL_SECONDS', 'TRUST_PROXY', 'LOG_LEVEL',
  'ACCESS_LOG', 'WORKERS', 'CACHE_MAX_BYTES', 'NEGATIVE_CACHE_MS', 'VISIT_FLUSH_MS', 'VISIT_STATS', 'STATS_RETENTION_DAYS',
  'ARGON2_MEMORY_KIB', 'ARGON2_ITERATIONS', 'KDF_THREADS', 'SHUTDOWN_TIMEOUT_MS', 'DB_TIMEOUT_MS', 'CACHE_STALE_MS',
  'SESSION_CACHE_MS', 'METRICS_PORT', 'METRICS_HOST', 'NODE_OPTIONS', 'UV_THREADPOOL_SIZE', 'BLOCKLIST_SOURCES',
  'BLOCKLIST_REFRESH_S', 'LINK_CREATE_PER_MINUTE', 'LINK_CREATE_BURST', 'NEW_ACCOUNT_HOURS', 'REPORTS_SUSPEND_AFTER',
]
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !CONFIG_KEYS.includes(k) && !k.startsWith('BENCH_')))

/**
 * Starts what `spec` describes ({ kind: 'service', env } | { kind: 'ceiling', workers, links } |
 * { kind: 'api-ceiling' } | { kind: 'nginx', links }; `env` adds to any node process's environment, `nodeArgs` to its node flags) as `name`; resolves to { name, child, pid, url }.
 */
export async function start(name, spec, { tmp, database }) {
  const port = await freePort()
  const logFile = join(tmp, `${name}.log`)
  if (spec.kind === 'nginx') return startNginx(port, spec.links, tmp)
  let script
  let env
  let count = 1
  if (spec.kind === 'service') {
    script = 'dist/server.js'
    env = {
      ...database.serviceEnv,
      HOST: '127.0.0.1',
      PORT: String(port),
      ACCESS_LOG,
      TRUST_PROXY: '127.0.0.1',
      ARGON2_MEMORY_KIB: String(ARGON2.memoryKiB),
      ARGON2_ITERATIONS: String(ARGON2.iterations),
      // The create point measures the API's throughput, thousands of creates a second over the
      // seeded accounts: each account's own limit a minute (30 by default) is not what it measures.
      LINK_CREATE_PER_MINUTE: '100000', LINK_CREATE_BURST: '100000',
      ...spec.env,
    }
    count = Number(env.WORKERS ?? 1)
  } else if (spec.kind === 'ceiling') {
    script = join(BENCH_DIR, 'ceiling.mjs')
    env = { CEILING_PORT: String(port), CEILING_LINKS: spec.links, CEILING_WORKERS: String(spec.workers ?? 1), ...spec.env }
  } else {
    script = join(BENCH_DIR, 'api-ceiling.mjs')
    env = { CEILING_PORT: String(port), CEILING_DATABASE_URL: database.url, ...spec.env }
  }
  const { child } = await startLogged(name, process.execPath, [...(spec.nodeArgs ?? []), script], { env: { ...cleanEnv, ...env }, logFile, count })
  return { name, child, pid: child.pid, url: `http://127.0.0.1:${port}`, logFile, metricsUrl: undefined }
}

export async function stop(proc, say) {
  const { code, signal } = await stopChild(proc.child)
  if (code !== 0 && proc.logFile !== undefined) say(`  warning: ${proc.name} exited with ${code ?? signal}; log: ${proc.logFile}`)
}

export function nginxPresent() {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** nginx `return 302` from a map of the same links: what a server written in C does. */
async function startNginx(port, links, tmp) {
  const prefix = join(tmp, 'nginx')
  mkdirSync(join(prefix, 'logs'), { recursive: true })
  const quote = (s) => `"${s.replace(/["\\$]/g, '')}"`
  const map = links.map(([code, location]) => `    /r/${code} ${quote(location)};`).join('\n')
  const conf = `# written by scripts/bench/processes.mjs: the nginx ceiling (return 302 from a map)
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
  const child = spawnTracked('nginx', ['-p', prefix, '-c', confFile, '-e', join(prefix, 'logs', 'error.log')], { cwd: prefix, stdio: ['ignore', fd, fd] })
  closeSync(fd)
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 10_000
  let exited = false
  child.exited.then(() => (exited = true))
  for (;;) {
    try {
      const res = await fetch(`${url}/r/${links[0][0]}`, { redirect: 'manual' })
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
