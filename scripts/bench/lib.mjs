// Plumbing for `npm run bench`: child processes (always killed on exit), wrk runs, free ports,
// RSS of a process tree, and small statistics. Node 20 built-ins only.
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url))
export const ROOT = join(BENCH_DIR, '..', '..')
export const LUA = join(BENCH_DIR, 'bench.lua')

// ---------------------------------------------------------------------------------------------
// Child processes. Each runs in its own process group (detached), so that killing the group
// reaches its workers (node:cluster, nginx) too; every one is killed when we exit, however.

const live = new Set()

export function spawnTracked(command, args, options) {
  const child = spawn(command, args, { ...options, detached: true })
  const entry = { child, pid: child.pid }
  live.add(entry)
  child.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(entry)
      resolve({ code, signal })
    })
    child.once('error', (err) => {
      live.delete(entry)
      resolve({ code: null, signal: null, err })
    })
  })
  return child
}

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal)
  } catch {
    try {
      process.kill(pid, signal)
    } catch {
      /* gone */
    }
  }
}

/** SIGTERM the child's group, then SIGKILL it if it has not exited within graceMs. */
export async function stopChild(child, graceMs = 15_000) {
  if (child.exitCode !== null || child.signalCode !== null) return child.exited
  killGroup(child.pid, 'SIGTERM')
  const timer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), graceMs)
  const result = await child.exited
  clearTimeout(timer)
  // The group may still hold children that outlived their parent.
  killGroup(child.pid, 'SIGKILL')
  return result
}

/** Synchronous last resort (process 'exit'): SIGKILL every group still alive. */
export function killAllNow() {
  for (const { pid } of live) killGroup(pid, 'SIGKILL')
  live.clear()
}

export async function stopAll() {
  await Promise.all([...live].map(({ child }) => stopChild(child, 3_000)))
}

// ---------------------------------------------------------------------------------------------

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** One API call from a random address of 10.9.0.0/16 (the service trusts the bench as its proxy): the status and the JSON body. */
export async function api(base, method, path, { token, body } = {}) {
  const headers = { 'x-forwarded-for': `10.9.${randomBytes(1)[0]}.${randomBytes(1)[0]}` }
  if (token !== undefined) headers.authorization = `Bearer ${token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : undefined }
}

/** A service's environment for a quick run of its own: embedded database in `dataDir`, cheap hashing, no creation limit. */
export const quickServiceEnv = (dataDir) => ({
  PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', TRUST_PROXY: '127.0.0.1',
  ARGON2_MEMORY_KIB: '64', ARGON2_ITERATIONS: '1', LINK_CREATE_PER_MINUTE: '100000', LINK_CREATE_BURST: '100000',
})

/**
 * `perAccount` links in each of `accounts` new accounts, made through the service's API at `base`
 * and each visited once (so cached): the lines of a wrk links file, `code<TAB>url`.
 */
export async function linksThroughApi(base, { accounts = 1, perAccount = 50, urlFor = (a, i) => `https://example.com/${a}-${i}` } = {}) {
  const password = 'correct horse battery'
  const lines = []
  for (let a = 0; a < accounts; a++) {
    const username = `bench${a}`
    await api(base, 'POST', '/api/v1/users', { body: { username, password, display_name: 'Bench' } })
    const { body: session } = await api(base, 'POST', '/api/v1/auth/login', { body: { username, password } })
    for (let i = 0; i < perAccount; i++) {
      const url = urlFor(a, i)
      const { status, body: link } = await api(base, 'POST', '/api/v1/links', { token: session?.token, body: { url } })
      if (status !== 201) throw new Error(`${base}: create refused (${status}): ${JSON.stringify(link)}`)
      lines.push(`${link.code}\t${url}`)
      await fetch(`${base}/r/${link.code}`, { redirect: 'manual' })
    }
  }
  return lines
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Starts a server process whose stdout and stderr go to logFile, and waits until the log has
 * `count` lines whose JSON msg is "listening". Returns the child and the first such line.
 */
export async function startLogged(name, command, args, { env, cwd = ROOT, logFile, count = 1, timeoutMs = 120_000 }) {
  const fd = openSync(logFile, 'a')
  const child = spawnTracked(command, args, { cwd, env, stdio: ['ignore', fd, fd] })
  closeSync(fd)
  const deadline = Date.now() + timeoutMs
  let exited = false
  child.exited.then(() => (exited = true))
  for (;;) {
    const lines = readFileSync(logFile, 'utf8').split('\n')
    const found = []
    for (const line of lines) {
      if (!line.startsWith('{')) continue
      try {
        const msg = JSON.parse(line)
        if (msg.msg === 'listening') found.push(msg)
      } catch {
        /* not ours */
      }
    }
    if (found.length >= count) return { child, listening: found[0], logFile }
    if (exited || Date.now() > deadline) {
      await stopChild(child, 2_000)
      const tail = lines.slice(-20).join('\n')
      throw new Error(`${name} did not start (${exited ? 'it exited' : 'timed out'}); log ${logFile}:\n${tail}`)
    }
    await sleep(50)
  }
}

// ---------------------------------------------------------------------------------------------
// wrk

/**
 * One wrk run against url with bench.lua in the given mode; resolves to the parsed BENCH_JSON
 * plus rps. Throws when wrk fails or prints no result.
 */
export async function runWrk({ url, connections, seconds, threads = 1, args, timeout = '5s' }) {
  const wrkArgs = [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--timeout', timeout, '-s', LUA, url, '--', ...args]
  const child = spawnTracked('wrk', wrkArgs, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const { code, signal, err } = await child.exited
  if (err) throw err
  const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '))
  if (code !== 0 || line === undefined) {
    throw new Error(`wrk ${wrkArgs.join(' ')} failed (${code ?? signal}):\n${out.slice(-2000)}`)
  }
  return withRate(JSON.parse(line.slice('BENCH_JSON '.length)))
}

export function withRate(r) {
  const errors = r.connect_errors + r.read_errors + r.write_errors + r.timeouts
  return { ...r, rps: r.requests / (r.duration_us / 1e6), socket_errors: errors }
}

/** Runs a node script that prints BENCH_JSON (argon2.mjs). */
export async function runNodeJson(script, args) {
  const child = spawnTracked(process.execPath, [script, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const { code } = await child.exited
  const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '))
  if (code !== 0 || line === undefined) throw new Error(`${script} failed (${code}):\n${out.slice(-2000)}`)
  return withRate(JSON.parse(line.slice('BENCH_JSON '.length)))
}

// ---------------------------------------------------------------------------------------------
// Memory

/** A /proc stat line's fields after "(comm)" (the command may contain spaces and parentheses), and the command. */
function readStat(path) {
  const stat = readFileSync(path, 'utf8')
  const close = stat.lastIndexOf(')')
  return { comm: stat.slice(stat.indexOf('(') + 1, close), fields: stat.slice(close + 2).split(' ') }
}
// Field numbers of proc(5) less 3 (they count from after "(comm)"): ppid 4, utime 14, stime 15,
// cutime 16 and cstime 17 (the CPU of children waited for).
const PPID = 1
const UTIME = 11
const STIME = 12
const CUTIME = 13
const CSTIME = 14

/** Every process alive now: its pid, parent, command name and CPU ticks so far (user + system). */
function processStats() {
  const out = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const { comm, fields } = readStat(`/proc/${entry}/stat`)
      out.push({ pid: Number(entry), ppid: Number(fields[PPID]), comm, ticks: Number(fields[UTIME]) + Number(fields[STIME]) })
    } catch {
      /* exited meanwhile */
    }
  }
  return out
}

/** pid and all its descendants, from /proc/{pid}/stat. */
export function processTree(root, stats = processStats()) {
  const children = new Map()
  for (const { pid, ppid } of stats) {
    if (!children.has(ppid)) children.set(ppid, [])
    children.get(ppid).push(pid)
  }
  const out = []
  const walk = (pid) => {
    out.push(pid)
    for (const c of children.get(pid) ?? []) walk(c)
  }
  walk(root)
  return out
}

/** Sum of VmRSS and of VmHWM (peak) over the process tree, in bytes. */
export function treeMemory(root) {
  let rss = 0
  let hwm = 0
  let processes = 0
  for (const pid of processTree(root)) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      rss += Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024
      hwm += Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024
      processes++
    } catch {
      /* exited meanwhile */
    }
  }
  return { rss, hwm, processes }
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100

/** CPU time (user + system, seconds) used so far by a process and its children alive now. */
export function treeCpuSeconds(root) {
  const stats = processStats()
  const tree = new Set(processTree(root, stats))
  return stats.reduce((sum, p) => (tree.has(p.pid) ? sum + p.ticks : sum), 0) / CLOCK_TICKS
}

/** CPU seconds used so far by every process of this command name alive now (e.g. 'postgres': a local server's backends). */
export function commandCpuSeconds(command) {
  return processStats().reduce((sum, p) => (p.comm === command ? sum + p.ticks : sum), 0) / CLOCK_TICKS
}

/** CPU seconds of a process's main thread so far (the task of the same id: for Node, its event loop). */
export function mainThreadCpuSeconds(pid) {
  const { fields } = readStat(`/proc/${pid}/task/${pid}/stat`)
  return (Number(fields[UTIME]) + Number(fields[STIME])) / CLOCK_TICKS
}

/** CPU seconds of each thread of a process so far, by thread id (the main thread's id is the pid). */
export function threadCpuSeconds(pid) {
  const out = new Map()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const { fields } = readStat(`/proc/${pid}/task/${tid}/stat`)
      out.set(tid, (Number(fields[UTIME]) + Number(fields[STIME])) / CLOCK_TICKS)
    } catch {
      /* ended meanwhile */
    }
  }
  return out
}

/** CPU seconds of this process's children that have ended and been waited for (a wrk run, once it is over). */
export function endedChildrenCpuSeconds() {
  const { fields } = readStat('/proc/self/stat')
  return (Number(fields[CUTIME]) + Number(fields[CSTIME])) / CLOCK_TICKS
}

// ---------------------------------------------------------------------------------------------
// Statistics

export function median(values) {
  const s = [...values].sort((a, b) => a - b)
  if (s.length === 0) return NaN
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

export const min = (values) => Math.min(...values)
export const max = (values) => Math.max(...values)
