// The tail of a cached redirect while the visit flush writes N distinct links (issue 22, part 3).
// A fresh PostgreSQL database gets 100,000 links; for each N in 0, 1k, 10k and 100k the service
// starts with VISIT_FLUSH_MS set so that its first flush falls inside the probe: browser-like
// visits to N distinct links first (wrk "visit" mode, so the flush hashes visitors and works out
// breakdowns), then 8 connections redirect over 50 cached links for 10 s, across the flush. The
// node:http ceiling gets the same probe in the same round. Prints the medians over the rounds.
// Needs dist/ (npm run build), wrk, and PostgreSQL at BENCH_ADMIN_URL (default: the local server).
//   node scripts/bench/flush-tail.mjs [rounds, 3]
//   BENCH_FLUSH_SIZES=100000 BENCH_KEEP=1 BENCH_NODE_ARGS='--cpu-prof --trace-gc' node scripts/bench/flush-tail.mjs 1
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { median, runWrk, sleep } from './lib.mjs'
import { start, stop } from './processes.mjs'

const ROUNDS = Number(process.argv[2] ?? 3)
const SIZES = process.env.BENCH_FLUSH_SIZES?.split(',').map(Number) ?? [0, 1_000, 10_000, 100_000]
const PROBE_SECONDS = 10
const HOT = 50
/** BENCH_NODE_ARGS: node flags for the service, to look inside a stall (e.g. --cpu-prof --trace-gc); BENCH_KEEP=1 keeps the logs. */
const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const say = (line) => process.stdout.write(`${line}\n`)
const code = (i) => `F${String(i).padStart(7, '0')}`
const location = (i) => `https://www.example.org/articles/${i}`

const tmp = mkdtempSync(join(tmpdir(), 'bench-flush-tail-'))
const name = `bench_flush_tail_${randomBytes(4).toString('hex')}`
const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
await admin`create database ${admin(name)}`
const url = new URL(ADMIN_URL)
url.pathname = `/${name}`
const database = { serviceEnv: { DATABASE_URL: url.toString() } }
const results = { ceiling: [], ...Object.fromEntries(SIZES.map((n) => [n, []])) }

try {
  // The schema, from the service's own first start; then the links, straight into the table.
  const first = await start('schema', { kind: 'service', env: {} }, { tmp, database })
  await stop(first, say)
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {} })
  const [user] = await sql`insert into users (username, display_name, password_hash) values ('bench', 'bench', 'x') returning id`
  await sql`insert into links (code, user_id, url, location)
    select 'F' || lpad(i::text, 7, '0'), ${user.id}, 'https://www.example.org/articles/' || i, 'https://www.example.org/articles/' || i
    from generate_series(0, ${Math.max(...SIZES) - 1}) i`
  await sql`vacuum analyze links`
  await sql.end()
  const all = Array.from({ length: Math.max(...SIZES) }, (_, i) => `${code(i)}\t${location(i)}`)
  writeFileSync(join(tmp, 'hot'), `${all.slice(0, HOT).join('\n')}\n`)
  for (const n of SIZES) if (n > 0) writeFileSync(join(tmp, `links-${n}`), `${all.slice(0, n).join('\n')}\n`)
  writeFileSync(join(tmp, 'all'), `${all.join('\n')}\n`)
  const probe = async (target) => {
    await runWrk({ url: target, connections: 8, seconds: 1, args: ['redirect', join(tmp, 'hot'), '0', '7'] }) // the hot links cached
    return runWrk({ url: target, connections: 8, seconds: PROBE_SECONDS, args: ['redirect', join(tmp, 'hot'), '0', '7'] })
  }

  for (let round = 1; round <= ROUNDS; round++) {
    const ceiling = await start(`ceiling, round ${round}`, { kind: 'ceiling', links: join(tmp, 'all') }, { tmp, database })
    results.ceiling.push(await probe(ceiling.url))
    await stop(ceiling, say)
    for (const n of SIZES) {
      // Enough time to visit every one of the n links at a few thousand a second, then the probe's
      // warm-up; the flush falls 3 s into the probe.
      const fillSeconds = Math.max(2, Math.ceil(n / 4_000))
      const flushMs = (fillSeconds + 1 + 1 + 3) * 1_000
      const svc = await start(`service, ${n} links, round ${round}`, { kind: 'service', env: { VISIT_FLUSH_MS: String(flushMs), ACCESS_LOG: 'off' }, nodeArgs }, { tmp, database })
      const t0 = performance.now()
      if (n > 0) await runWrk({ url: svc.url, connections: 16, seconds: fillSeconds, args: ['visit', join(tmp, `links-${n}`), '0', String(Math.floor(n / 2))] })
      await sleep(Math.max(0, (fillSeconds + 1) * 1_000 - (performance.now() - t0)))
      results[n].push(await probe(svc.url))
      await stop(svc, say)
    }
    say(`round ${round} of ${ROUNDS} done`)
  }
  const ms = (runs, key) => `${(median(runs.map((r) => r[key])) / 1000).toFixed(1)} ms`
  const ceilingP99 = median(results.ceiling.map((r) => r.p99_us))
  say(`\nNode ${process.version}, ${ROUNDS} rounds, 8 connections over ${HOT} cached links for ${PROBE_SECONDS} s, medians:`)
  say('| During the probe | redirects/s | p99 | p99 ÷ ceiling\'s | max |')
  say('|---|---|---|---|---|')
  say(`| node:http ceiling | ${median(results.ceiling.map((r) => r.rps)).toFixed(0)} | ${ms(results.ceiling, 'p99_us')} | 1.00× | ${ms(results.ceiling, 'max_us')} |`)
  for (const n of SIZES) {
    const label = n === 0 ? 'service, a flush of the probe\'s own 50 links' : `service, a flush of ${n.toLocaleString('en')} distinct links`
    say(`| ${label} | ${median(results[n].map((r) => r.rps)).toFixed(0)} | ${ms(results[n], 'p99_us')} | ${(median(results[n].map((r) => r.p99_us)) / ceilingP99).toFixed(2)}× | ${ms(results[n], 'max_us')} |`)
  }
} finally {
  await admin`drop database ${admin(name)} with (force)`
  await admin.end()
  if (process.env.BENCH_KEEP === '1') say(`kept: ${tmp}`)
  else rmSync(tmp, { recursive: true, force: true })
}
