#!/usr/bin/env node
// A whole cluster on one machine, for tests, the failover drill and the bench (docs/scale.md):
// a PostgreSQL 15 primary, a synchronous standby and an asynchronous read replica (pg_basebackup,
// streaming replication), PgBouncer in transaction mode in front of the primary, N service nodes
// and HAProxy in front of them. Everything on ports and in a folder of its own; `down` stops and
// removes all of it. Run as root, the database processes run as the postgres user.
//
//   npm run build && node scripts/cluster.mjs up [--nodes 3] [--port 22200] [--dir /tmp/link-service-cluster]
//   node scripts/cluster.mjs down [--dir /tmp/link-service-cluster]
//
// Ports from --port (P): primary P, standby P+1, replica P+2, PgBouncer P+3, HAProxy P+4, nodes
// P+10.. . The default lies below Linux's ephemeral range (32768-60999), where a port can be
// taken at any moment by a connection's own end or a server on port 0. `up` prints the URLs as
// JSON and leaves cluster.json in the folder for `down`; a failed `up` removes what it started.
// Tests and scripts import up/down/stopPrimary/promoteStandby.
import { spawn, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, chownSync, openSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin'
const DB = 'link_service'
const asRoot = process.getuid?.() === 0

/** Runs a program, as the postgres user when this process is root (PostgreSQL refuses root). */
const runPg = (file, args, opts = {}) => execFileSync(asRoot ? 'runuser' : file, asRoot ? ['-u', 'postgres', '--', file, ...args] : args, { stdio: 'pipe', timeout: 60_000, ...opts })

/** URLs of a cluster laid out from base port `port` (as up() makes them). */
export function layout(port, nodes = 0) {
  const pg = (p, db = DB) => `postgres://postgres@127.0.0.1:${p}/${db}`
  return {
    primary: pg(port),
    standby: pg(port + 1),
    replica: pg(port + 2),
    pooler: pg(port + 3),
    /** the multi-host URL that finds whichever of primary and standby takes writes */
    failover: `postgres://postgres@127.0.0.1:${port},127.0.0.1:${port + 1}/${DB}?target_session_attrs=read-write`,
    balancer: nodes > 0 ? `http://127.0.0.1:${port + 4}` : undefined,
    nodes: Array.from({ length: nodes }, (_, i) => `http://127.0.0.1:${port + 10 + i}`),
  }
}

/**
 * Starts the cluster. `nodes`: service nodes to start (0: the databases and PgBouncer only);
 * `server`: their entry (dist/server.js); `nodeEnv`: their settings beyond the URLs.
 * On failure, what was started is stopped and the folder removed, and the error thrown.
 */
export async function up({ port = 22200, dir = join(tmpdir(), 'link-service-cluster'), nodes = 0, server = 'dist/server.js', nodeEnv = {}, balancer = nodes > 0 } = {}) {
  if (existsSync(join(dir, 'cluster.json'))) throw new Error(`${dir} holds a cluster already: run "down" first`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true, mode: 0o755 })
  if (asRoot) chownSync(dir, uid('postgres'), gid('postgres'))
  const state = { port, dir, pids: [], dataDirs: [], urls: layout(port, nodes) }
  const save = () => writeFileSync(join(dir, 'cluster.json'), JSON.stringify(state, null, 2))
  save()
  try {
    const primary = join(dir, 'primary')
    runPg(`${PG_BIN}/initdb`, ['-D', primary, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'])
    writeFileSync(join(primary, 'postgresql.conf'), pgConf(port, dir), { flag: 'a' })
    startPg(state, primary)
    save()
    await waitPg(port)
    for (const [name, p] of [['standby', port + 1], ['replica', port + 2]]) {
      const data = join(dir, name)
      runPg(`${PG_BIN}/pg_basebackup`, ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'])
      // Its own port and the name the primary's synchronous_standby_names refers to.
      writeFileSync(join(data, 'postgresql.auto.conf'), `port = ${p}\nprimary_conninfo = 'host=127.0.0.1 port=${port} user=postgres application_name=${name}'\n`, { flag: 'a' })
      startPg(state, data)
      save()
      await waitPg(p)
    }
    // Set after the base backups, so that the standby, once promoted, does not wait for a standby of its own.
    psql(port, 'postgres', `alter system set synchronous_standby_names = 'standby'`)
    psql(port, 'postgres', 'select pg_reload_conf()')
    psql(port, 'postgres', `create database ${DB}`)
    await waitFor(30_000, () => psql(port, 'postgres', `select count(*) from pg_stat_replication where state = 'streaming' and application_name in ('standby', 'replica')`) === '2', 'standby and replica streaming')
    await startPgBouncer(state)
    save()
    const urls = state.urls
    for (let i = 0; i < nodes; i++) {
      startProcess(state, `node-${i + 1}`, process.execPath, [server], {
        ...process.env,
        PORT: String(port + 10 + i),
        HOST: '127.0.0.1',
        DATABASE_URL: urls.pooler,
        DATABASE_PREPARE: 'off',
        DATABASE_LISTEN_URL: urls.failover,
        DATABASE_READ_URL: urls.replica,
        TRUST_PROXY: '127.0.0.1',
        ...nodeEnv,
      })
      save()
    }
    for (const [i, url] of urls.nodes.entries()) {
      await waitFor(60_000, () => fetch(`${url}/healthz`).then((r) => r.status === 200, () => false), `${url}/healthz`).catch((err) => {
        // Its own words say why (a configuration error, most often).
        const log = readFileSync(join(dir, `node-${i + 1}.log`), 'utf8').trim().split('\n').slice(-3).join('\n')
        throw new Error(`${err.message}; its log ends:\n${log}`)
      })
    }
    if (balancer && nodes > 0) {
      writeFileSync(join(dir, 'haproxy.cfg'), haproxyConf(port, nodes))
      startProcess(state, 'haproxy', 'haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')], process.env)
      save()
      await waitFor(10_000, () => fetch(`${urls.balancer}/healthz`).then((r) => r.status === 200, () => false), 'the balancer')
    }
    return state
  } catch (err) {
    down(dir)
    throw err
  }
}

/**
 * Stops everything a cluster in `dir` started (nodes, balancer, PgBouncer, databases) and removes
 * the folder. Synchronous, so that a process's 'exit' handler can run it to the end.
 */
export function down(dir = join(tmpdir(), 'link-service-cluster')) {
  const file = join(dir, 'cluster.json')
  if (!existsSync(file)) return void rmSync(dir, { recursive: true, force: true })
  const state = JSON.parse(readFileSync(file, 'utf8'))
  for (const pid of [...state.pids].reverse()) kill(pid)
  for (const data of state.dataDirs) stopPg(data)
  const bouncer = join(dir, 'pgbouncer.pid')
  if (existsSync(bouncer)) kill(Number(readFileSync(bouncer, 'utf8')))
  rmSync(dir, { recursive: true, force: true })
}

/** The primary dies: an immediate stop (no checkpoint, connections cut), as a crash would. */
export function stopPrimary(state) {
  stopPg(join(state.dir, 'primary'))
}

/** The synchronous standby becomes the primary. Resolves once it takes writes. */
export async function promoteStandby(state) {
  runPg(`${PG_BIN}/pg_ctl`, ['promote', '-w', '-D', join(state.dir, 'standby')])
  await waitFor(30_000, () => psql(state.port + 1, DB, 'select pg_is_in_recovery()') === 'f', 'the promoted standby')
}

/** Stops (true) or starts again (false) the synchronous standby: the primary's commits wait for it meanwhile. */
export function stopStandby(state, stopped) {
  const data = join(state.dir, 'standby')
  if (stopped) stopPg(data)
  else runPg(`${PG_BIN}/pg_ctl`, ['start', '-w', '-t', '60', '-D', data, '-l', `${data}.log`])
}

/** Stops (true) or resumes (false) the replica's replay: a replica that lags. */
export function pauseReplica(state, paused) {
  psql(state.port + 2, DB, paused ? 'select pg_wal_replay_pause()' : 'select pg_wal_replay_resume()')
}

function pgConf(port, dir) {
  return [
    '',
    `port = ${port}`,
    `listen_addresses = '127.0.0.1'`,
    `unix_socket_directories = '${dir}'`,
    'wal_level = replica',
    'max_wal_senders = 10',
    'max_connections = 200',
    'hot_standby = on',
    // Small and fast: a test cluster, not a durable one (the drill's kill is of the server, not the machine).
    'shared_buffers = 32MB',
    'fsync = off',
    'full_page_writes = off',
    "log_min_messages = warning",
    '',
  ].join('\n')
}

function startPg(state, data) {
  state.dataDirs.push(data)
  try {
    runPg(`${PG_BIN}/pg_ctl`, ['start', '-w', '-t', '60', '-D', data, '-l', `${data}.log`])
  } catch (err) {
    // pg_ctl says only "examine the log", and a failed up() removes the folder with the log in it.
    let log = ''
    try {
      log = readFileSync(`${data}.log`, 'utf8').trim().split('\n').slice(-10).join('\n')
    } catch {}
    throw new Error(`${err.message.trim()}\n${data}.log:\n${log}`)
  }
}

function stopPg(data) {
  if (!existsSync(join(data, 'postmaster.pid'))) return
  try {
    runPg(`${PG_BIN}/pg_ctl`, ['stop', '-m', 'immediate', '-w', '-t', '30', '-D', data])
  } catch {
    // Already stopped, or stopping: the pid file says which; nothing else to do here.
  }
}

async function startPgBouncer(state) {
  const { dir, port } = state
  const conf = join(dir, 'pgbouncer.ini')
  writeFileSync(conf, [
    '[databases]',
    `* = host=127.0.0.1 port=${port} user=postgres`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port + 3}`,
    `unix_socket_dir = ${dir}`,
    'auth_type = any',
    'pool_mode = transaction',
    'max_client_conn = 1000',
    'default_pool_size = 40',
    // The service sends it at start-up (DB_TIMEOUT_MS); PgBouncer refuses unknown ones otherwise.
    'ignore_startup_parameters = idle_in_transaction_session_timeout',
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    `pidfile = ${join(dir, 'pgbouncer.pid')}`,
    '',
  ].join('\n'))
  if (asRoot) chownSync(conf, uid('postgres'), gid('postgres'))
  runPg('pgbouncer', ['-d', conf])
  await waitPg(port + 3)
}

function haproxyConf(port, nodes) {
  return [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    'frontend links',
    `  bind 127.0.0.1:${port + 4}`,
    '  default_backend nodes',
    'backend nodes',
    '  balance roundrobin',
    // A TCP check: a node whose database is away still serves cached redirects, so /healthz's 503 must not take it out.
    ...Array.from({ length: nodes }, (_, i) => `  server node${i + 1} 127.0.0.1:${port + 10 + i} check inter 1s`),
    '',
  ].join('\n')
}

function startProcess(state, name, file, args, env) {
  const log = openSync(join(state.dir, `${name}.log`), 'a')
  const child = spawn(file, args, { env, stdio: ['ignore', log, log], detached: true })
  child.unref()
  state.pids.push(child.pid)
}

function kill(pid) {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // Gone already.
  }
}

function psql(port, db, command) {
  return runPg(`${PG_BIN}/psql`, ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', db, '-XAtqc', command]).toString().trim()
}

async function waitPg(port) {
  await waitFor(30_000, () => {
    try {
      runPg(`${PG_BIN}/pg_isready`, ['-q', '-h', '127.0.0.1', '-p', String(port)])
      return true
    } catch {
      return false
    }
  }, `a server on port ${port}`)
}

async function waitFor(ms, check, what) {
  for (const until = Date.now() + ms; ; await sleep(100)) {
    try {
      if (await check()) return
    } catch {
      // Not yet.
    }
    if (Date.now() > until) throw new Error(`cluster: ${what} not ready within ${ms / 1000} s`)
  }
}

const uid = (user) => Number(execFileSync('id', ['-u', user]).toString())
const gid = (user) => Number(execFileSync('id', ['-g', user]).toString())

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command, ...rest] = process.argv.slice(2)
  const opt = (name, fallback) => {
    const i = rest.indexOf(`--${name}`)
    return i === -1 ? fallback : rest[i + 1]
  }
  const dir = resolve(opt('dir', join(tmpdir(), 'link-service-cluster')))
  if (command === 'up') {
    const state = await up({ dir, port: Number(opt('port', 22200)), nodes: Number(opt('nodes', 3)), server: opt('server', 'dist/server.js') })
    process.stdout.write(`${JSON.stringify(state.urls, null, 2)}\n`)
  } else if (command === 'down') {
    down(dir)
  } else {
    process.stderr.write('usage: node scripts/cluster.mjs up [--nodes 3] [--port 22200] [--dir DIR] [--server dist/server.js] | down [--dir DIR]\n')
    process.exit(2)
  }
}
