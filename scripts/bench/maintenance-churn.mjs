// Link churn across the statistics job's first run on a freshly started node: each run creates a
// fresh PostgreSQL database, starts the service on it, makes 4 accounts, and from 3 s after
// "listening" (the job's first run is at 5 s: on a fresh database it creates the partitions of
// yesterday to 3 days ahead, DDL under table locks) has 8 clients, two per account, create and
// delete links for 4 s (the creation allowance raised out of the way). Prints each run's answers by
// status, the day partitions the job made by the end (0: it never did its work), and the 5xx in all.
// Needs a build (npm run build, or the test build: BENCH_SERVER=build/src/server.js) and
// PostgreSQL at BENCH_ADMIN_URL (default: the local server).
//   node scripts/bench/maintenance-churn.mjs [runs, 3] [seconds, 4]
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { api, ROOT, sleep, startLogged, stopChild } from './lib.mjs'

const RUNS = Number(process.argv[2] ?? 3)
const SECONDS = Number(process.argv[3] ?? 4)
const ACCOUNTS = 4
const CLIENTS = 8
const CHURN_FROM_MS = 3_000
const SERVER = process.env.BENCH_SERVER ?? 'dist/server.js'
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const say = (line) => process.stdout.write(`${line}\n`)

async function oneRun(tmp, run) {
  const name = `bench_churn_${randomBytes(4).toString('hex')}`
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
  await admin`create database ${admin(name)}`
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  const logFile = join(tmp, `run${run}.log`)
  let child
  try {
    const started = await startLogged('service', process.execPath, [SERVER], {
      logFile,
      env: { ...process.env, DATABASE_URL: url.toString(), PORT: '0', LOG_LEVEL: 'info', ACCESS_LOG: 'off', LINK_CREATE_PER_MINUTE: '100000', LINK_CREATE_BURST: '100000', ARGON2_MEMORY_KIB: '64', ARGON2_ITERATIONS: '1', TRUST_PROXY: '127.0.0.1' },
    })
    child = started.child
    const listeningAt = Date.now()
    const base = started.listening.url ?? `http://127.0.0.1:${started.listening.port}`
    const tokens = []
    for (let i = 0; i < ACCOUNTS; i++) {
      const username = `churn${i}${randomBytes(3).toString('hex')}`
      await api(base, 'POST', '/api/v1/users', { body: { username, password: 'correct horse', display_name: 'Churn' } })
      const login = await api(base, 'POST', '/api/v1/auth/login', { body: { username, password: 'correct horse' } })
      tokens.push(login.body.token)
    }
    await sleep(Math.max(0, listeningAt + CHURN_FROM_MS - Date.now()))
    const statuses = new Map()
    const count = (s) => statuses.set(s, (statuses.get(s) ?? 0) + 1)
    const until = Date.now() + SECONDS * 1000
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const token = tokens[c % ACCOUNTS]
        while (Date.now() < until) {
          const made = await api(base, 'POST', '/api/v1/links', { token, body: { url: `https://example.com/${c}/${randomBytes(4).toString('hex')}` } })
          count(made.status)
          if (made.status !== 201) continue
          const gone = await api(base, 'DELETE', `/api/v1/links/${made.body.code}`, { token })
          count(gone.status)
        }
      }),
    )
    const log = readFileSync(logFile, 'utf8')
    // Whether the job did its work: the day partitions of visit_days it made (0 when it never ran)
    const db = postgres(url.toString(), { max: 1, onnotice: () => {} })
    const [{ n }] = await db`select count(*)::int as n from pg_inherits where inhparent = 'visit_days'::regclass and inhrelid <> 'visit_days_default'::regclass`
    await db.end({ timeout: 1 })
    return { statuses, partitions: n, jobWarnings: log.split('\n').filter((l) => l.includes('statistics job')).length }
  } finally {
    if (child !== undefined) await stopChild(child, 5_000)
    await admin`drop database if exists ${admin(name)} with (force)`
    await admin.end({ timeout: 1 })
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'bench-churn-'))
let total5xx = 0
try {
  for (let run = 1; run <= RUNS; run++) {
    const { statuses, partitions, jobWarnings } = await oneRun(tmp, run)
    const fives = [...statuses].filter(([s]) => s >= 500).reduce((n, [, k]) => n + k, 0)
    total5xx += fives
    const shown = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')
    say(`run ${run}: ${shown}; 5xx ${fives}; day partitions of visit_days made ${partitions}; statistics job warnings ${jobWarnings}`)
  }
  say(`5xx in ${RUNS} runs of ${SECONDS} s (${CLIENTS} clients, ${ACCOUNTS} accounts, from ${ROOT}/${SERVER}): ${total5xx}`)
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
