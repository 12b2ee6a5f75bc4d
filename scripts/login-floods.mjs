// Logins under pressure, with the configured argon2id cost (the defaults unless
// ARGON2_MEMORY_KIB / ARGON2_ITERATIONS / KDF_THREADS say otherwise), printing figures:
//   1. timing: medians of a failed login for an unknown user, a wrong password against a
//      current hash, against an old scrypt hash (as the previous release wrote), and against a
//      weaker argon2id hash;
//   2. a burst of 60 simultaneous logins from 60 addresses, half of them unknown usernames;
//   3. 50 devices of one user logging in at once from 50 addresses;
//   4. a 10 s flood of wrong-password PATCH /api/v1/users/me from one account (70 in flight),
//      while a bystander logs in from a third address once a second;
//   5. a 10 s flood of wrong-password logins aimed at one account from 25 addresses, each within
//      its 5/s allowance, while a bystander and the account's owner log in from other addresses;
//   6. (spray) a 15 s flood of wrong-password logins for random usernames from 100 addresses
//      (SPRAY_ADDRESSES), each within its 5/s allowance, while a bystander logs in once a second;
//   7. (burst-busy) the burst of 2 while another process keeps one core busy;
//   8. (fresh) 100 logins for unknown usernames at once, each from an address never seen, while a
//      returning user (signed in from its address before) and a newcomer sign in.
// Usage: npm run build && node scripts/login-floods.mjs [timing|burst|devices|patch|guess|spray|burst-busy|fresh ...]
// (all by default). DATABASE_URL for PostgreSQL, else an embedded database in a temporary dir.
import { randomBytes, scryptSync } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { loadConfig } from '../dist/config.js'
import { createLogger } from '../dist/log.js'
import { Passwords } from '../dist/passwords/passwords.js'
import { startService } from '../dist/service.js'

import { spawn } from 'node:child_process'

const wanted = new Set(process.argv.slice(2).length ? process.argv.slice(2) : ['timing', 'burst', 'devices', 'patch', 'guess', 'spray', 'burst-busy', 'fresh'])
const dataDir = mkdtempSync(join(tmpdir(), 'login-floods-'))
const config = loadConfig({ ...process.env, PORT: '0', DATA_DIR: dataDir, TRUST_PROXY: '127.0.0.1', ACCESS_LOG: 'off', LOG_LEVEL: 'error' })
const service = await startService(config, createLogger('error'), resolve('sql'), resolve('dist/app'))
const sql = service.db.sql
const PASSWORD = 'correct horse battery'
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (ms) => `${ms.toFixed(0)} ms`
let ipCounter = 0
const freshIp = () => `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter++ & 255}`

async function call(method, path, { body, token, ip = freshIp() } = {}) {
  const headers = { 'x-forwarded-for': ip }
  if (body !== undefined) headers['content-type'] = 'application/json'
  if (token !== undefined) headers.authorization = `Bearer ${token}`
  const t = performance.now()
  const res = await fetch(service.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, ms: performance.now() - t, body: text.startsWith('{') ? JSON.parse(text) : undefined }
}
const login = (username, password, ip) => call('POST', '/api/v1/auth/login', { body: { username, password }, ip })
const tally = (results) => Object.entries(results.reduce((m, r) => ((m[r.status] = (m[r.status] ?? 0) + 1), m), {})).map(([s, n]) => `${n} × ${s}`).join(', ')

/** Users straight into the table, all with this stored hash (their password is PASSWORD). */
async function seedUsers(prefix, n, hash) {
  const names = Array.from({ length: n }, (_, i) => `${prefix}${i}`)
  await sql`insert into users (username, display_name, password_hash) select u, 'Seeded', ${hash} from unnest(${names}::text[]) as u`
  return names
}

async function register(prefix) {
  const username = `${prefix}${randomBytes(4).toString('hex')}`
  const res = await call('POST', '/api/v1/users', { body: { username, password: PASSWORD, display_name: 'Flood' } })
  if (res.status !== 201) throw new Error(`register: ${res.status}`)
  const token = (await login(username, PASSWORD)).body.token
  return { username, token }
}

console.log(`argon2id m=${config.argon2.memoryKiB} KiB t=${config.argon2.iterations} p=1, ${config.kdfThreads} KDF threads, ${service.db.embedded ? 'embedded database' : 'PostgreSQL'}`)

if (wanted.has('timing')) {
  const current = await service.deps.passwords.hash(PASSWORD)
  const weakParams = { memoryKiB: Math.max(8, config.argon2.memoryKiB >> 2), iterations: 1 }
  const weakHasher = new Passwords(weakParams, 1)
  const weak = await weakHasher.hash(PASSWORD)
  await weakHasher.close()
  const salt = randomBytes(16)
  const scrypt = ['scrypt', 16, 8, 1, salt.toString('base64url'), scryptSync(PASSWORD, salt, 32, { N: 2 ** 16, r: 8, p: 1, maxmem: 2 ** 28 }).toString('base64url')].join('$')
  const ROUNDS = 15
  const kinds = {
    'unknown user': Array.from({ length: ROUNDS }, (_, i) => `nobody${i}`),
    'wrong password, current argon2id hash': await seedUsers('cur', ROUNDS, current),
    'wrong password, scrypt N=2^16 hash (previous release)': await seedUsers('old', ROUNDS, scrypt),
    [`wrong password, weaker argon2id (m=${weakParams.memoryKiB}, t=1)`]: await seedUsers('weak', ROUNDS, weak),
  }
  const times = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]))
  // Interleaved, one at a time, each username once (so no failure backoff), after a warm-up.
  await login('warmup', 'wrong password')
  for (let i = 0; i < ROUNDS; i++) {
    for (const [kind, names] of Object.entries(kinds)) {
      const r = await login(names[i], 'wrong password')
      if (r.status !== 401) throw new Error(`${kind}: ${r.status}`)
      times[kind].push(r.ms)
    }
  }
  console.log(`\n1. failed login, median of ${ROUNDS} (one at a time, interleaved):`)
  for (const [kind, ms] of Object.entries(times)) console.log(`   ${kind}: ${fmt(median(ms))} (min ${fmt(Math.min(...ms))}, max ${fmt(Math.max(...ms))})`)
  const ok = await login(kinds['wrong password, scrypt N=2^16 hash (previous release)'][0], PASSWORD)
  const [row] = await sql`select password_hash from users where username = ${kinds['wrong password, scrypt N=2^16 hash (previous release)'][0]}`
  console.log(`   a correct login with the scrypt hash: ${ok.status} in ${fmt(ok.ms)}; stored now: ${row.password_hash.slice(0, 30)}...`)
}

async function burst(label, prefix, net) {
  const known = await seedUsers(prefix, 30, await service.deps.passwords.hash(PASSWORD))
  const t = performance.now()
  const results = await Promise.all(
    Array.from({ length: 60 }, (_, i) => login(i % 2 === 0 ? known[i / 2] : `unknown-${prefix}-${i}`, PASSWORD, `10.${net}.0.${i + 1}`)),
  )
  console.log(`\n${label}: ${tally(results)}; slowest ${fmt(Math.max(...results.map((r) => r.ms)))}, all done in ${fmt(performance.now() - t)}`)
}

if (wanted.has('burst')) await burst('2. burst of 60 logins from 60 addresses, half unknown', 'burst', 60)

if (wanted.has('devices')) {
  const { username } = await register('devices')
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => login(username, PASSWORD, `10.50.0.${i + 1}`)))
  console.log(`\n3. 50 devices of one user from 50 addresses at once: ${tally(results)}; slowest ${fmt(Math.max(...results.map((r) => r.ms)))}`)
}

/**
 * Runs `attacker(i)` for each of `n` attackers for `ms`: each keeps one request in flight, or with
 * `everyMs` sends one that often whatever the answers do. Meanwhile each probe runs once a second
 * (or as soon as its previous answer came, if that took longer).
 */
async function flood(label, { ms, n, everyMs }, attacker, probes) {
  const until = performance.now() + ms
  const attacks = []
  const loops = Array.from({ length: n }, async (_, i) => {
    while (performance.now() < until) {
      if (everyMs === undefined) attacks.push(await attacker(i))
      else {
        attacks.push(attacker(i))
        await new Promise((r) => setTimeout(r, everyMs))
      }
    }
  })
  const probeResults = Object.fromEntries(Object.keys(probes).map((k) => [k, []]))
  await new Promise((r) => setTimeout(r, 500))
  // Each probe on its own: one a second, or at once after a slower answer.
  await Promise.all(
    Object.entries(probes).map(async ([name, probe]) => {
      while (performance.now() < until) {
        await Promise.all([probe().then((r) => probeResults[name].push(r)), new Promise((r) => setTimeout(r, 1000))])
      }
    }),
  )
  await Promise.all(loops)
  const settled = await Promise.all(attacks)
  console.log(`\n${label}: ${settled.length} attacking requests (${tally(settled)})`)
  for (const [name, rs] of Object.entries(probeResults)) {
    console.log(`   ${name}: ${tally(rs)}; median ${fmt(median(rs.map((r) => r.ms)))}, slowest ${fmt(Math.max(...rs.map((r) => r.ms)))}`)
    console.log(`     each, in order (s): ${rs.map((r) => (r.ms / 1000).toFixed(1)).join(' ')}`)
  }
}

if (wanted.has('patch')) {
  const attacker = await register('patcher')
  const bystander = await register('bystander')
  await flood(
    '4. 10 s of wrong-password PATCH /users/me from one account and address, 70 in flight',
    { ms: 10_000, n: 70 },
    () => call('PATCH', '/api/v1/users/me', { token: attacker.token, ip: '10.70.0.1', body: { password: 'new password 1', current_password: 'wrong password' } }),
    { 'bystander login from a third address': () => login(bystander.username, PASSWORD, freshIp()) },
  )
}

if (wanted.has('guess')) {
  const victim = await register('victim')
  const bystander = await register('bystander')
  // Each of 25 addresses sends 5 a second, within its bucket, without waiting for answers.
  await flood(
    '5. 10 s of wrong-password logins at one account from 25 addresses, 5/s each',
    { ms: 10_000, n: 25, everyMs: 200 },
    (i) => login(victim.username, `guess ${randomBytes(4).toString('hex')}`, `10.25.0.${i + 1}`),
    {
      'bystander login from a third address': () => login(bystander.username, PASSWORD, freshIp()),
      "the attacked account's owner, from its own address": () => login(victim.username, PASSWORD, freshIp()),
    },
  )
}

// The attacking addresses of scenario 6, in a process of their own (as attackers are): each
// sends a login for a random username every 200 ms, without waiting for answers; prints a tally.
const SPRAYER = `
  const [url, n, ms] = process.argv.slice(1).map((a, i) => (i === 0 ? a : Number(a)))
  const until = Date.now() + ms
  const counts = {}
  const pending = []
  const one = (i) => fetch(url + '/api/v1/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.' + (100 + (i >> 8)) + '.' + (i & 255) + '.1' },
    body: JSON.stringify({ username: 'spray' + Math.random().toString(36).slice(2, 10), password: 'wrong password' }),
  }).then(async (r) => { await r.arrayBuffer(); counts[r.status] = (counts[r.status] ?? 0) + 1 }, () => { counts.error = (counts.error ?? 0) + 1 })
  await Promise.all(Array.from({ length: n }, async (_, i) => {
    await new Promise((r) => setTimeout(r, (i * 200) / n))
    while (Date.now() < until) {
      pending.push(one(i))
      await new Promise((r) => setTimeout(r, 200))
    }
  }))
  await Promise.all(pending)
  console.log(JSON.stringify(counts))
`

if (wanted.has('spray')) {
  const n = Number(process.env.SPRAY_ADDRESSES ?? 100)
  const ms = 15_000
  const bystander = await register('bystander')
  const sprayer = spawn(process.execPath, ['--input-type=module', '-e', SPRAYER, service.url, String(n), String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let tallied = ''
  sprayer.stdout.setEncoding('utf8').on('data', (d) => (tallied += d))
  const done = new Promise((r) => sprayer.once('close', r))
  const until = performance.now() + ms
  await new Promise((r) => setTimeout(r, 500))
  const probes = []
  while (performance.now() < until) {
    await Promise.all([login(bystander.username, PASSWORD, freshIp()).then((r) => probes.push(r)), new Promise((r) => setTimeout(r, 1000))])
  }
  await done
  console.log(`\n6. ${ms / 1000} s of wrong-password logins for random usernames from ${n} addresses, 5/s each (another process): ${tallied.trim()}`)
  console.log(`   bystander login from a fresh address, once a second: ${tally(probes)}; median ${fmt(median(probes.map((r) => r.ms)))}, slowest ${fmt(Math.max(...probes.map((r) => r.ms)))}`)
  console.log(`     each, in order (s): ${probes.map((r) => (r.ms / 1000).toFixed(1)).join(' ')}`)
  for (const r of probes.filter((p) => p.status !== 200)) console.log(`     a ${r.status}: ${r.body?.message}`)
}

if (wanted.has('burst-busy')) {
  // Another process keeps one core busy for the length of the burst.
  const busy = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' })
  await new Promise((r) => setTimeout(r, 500))
  try {
    await burst('7. the burst of 2 while another process keeps one core busy', 'busy', 61)
  } finally {
    busy.kill()
  }
}

if (wanted.has('fresh')) {
  const n = Number(process.env.FRESH_ADDRESSES ?? 100)
  const home = freshIp()
  const returning = await register('returning')
  if ((await login(returning.username, PASSWORD, home)).status !== 200) throw new Error('the returning user could not sign in')
  const newcomer = await register('newcomer')
  const flood = Array.from({ length: n }, (_, i) => login(`unknown${i}${randomBytes(3).toString('hex')}`, 'wrong password', freshIp()))
  await new Promise((r) => setTimeout(r, 50))
  const [back, fresh] = await Promise.all([login(returning.username, PASSWORD, home), login(newcomer.username, PASSWORD, freshIp())])
  const flooded = await Promise.all(flood)
  console.log(`\n8. ${n} logins for unknown usernames at once, each from a new address: ${tally(flooded)}, slowest ${fmt(Math.max(...flooded.map((r) => r.ms)))}`)
  console.log(`   a returning user from its address: ${back.status} in ${fmt(back.ms)}; a newcomer from a new address: ${fresh.status} in ${fmt(fresh.ms)}`)
}

await service.close()
rmSync(dataDir, { recursive: true, force: true })
