// The visit flush's cost with the breakdowns (device, browser, OS, country) against VISIT_STATS=off,
// in the same round: a VisitCounter of each kind is fed the same browser-like visits (1,000 links,
// 256 distinct User-Agents of eight families, 4,096 distinct public addresses) and flushed to a
// fresh PostgreSQL database; the wall time of each flush is printed, the median over the rounds.
// Needs dist/ (npm run build) and PostgreSQL at BENCH_ADMIN_URL (default: the local server).
//   node scripts/bench/flush.mjs [visits per flush, 20000] [rounds, 7]
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { migrate } from '../../dist/db/migrate.js'
import { openCountries } from '../../dist/stats/geo.js'
import { VisitCounter } from '../../dist/stats/visits.js'
import { createLogger } from '../../dist/log.js'

const VISITS = Number(process.argv[2] ?? 20_000)
const ROUNDS = Number(process.argv[3] ?? 7)
const LINKS = 1_000
const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_%d like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.%d Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.%d.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.%d.0 Safari/537.36 Edg/126.0.%d.0',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.%d.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.%d Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:12%d.0) Gecko/20100101 Firefox/12%d.0',
  'Mozilla/5.0 (iPad; CPU OS 17_%d like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.%d Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.%d Chrome/121.0 Mobile Safari/537.36',
]
const agent = (k) => AGENTS[k % 8].replaceAll('%d', String(Math.floor(k / 8) % 32))
const address = (k) => `${11 + (k % 200)}.${(k * 37) % 256}.${k % 16}.1`

const name = `bench_flush_${randomBytes(4).toString('hex')}`
const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
await admin`create database ${admin(name)}`
const url = new URL(ADMIN_URL)
url.pathname = `/${name}`
const sql = postgres(url.toString(), { max: 4, onnotice: () => {} })
try {
  await migrate(sql, fileURLToPath(new URL('../../sql/', import.meta.url)))
  const [user] = await sql`insert into users (username, display_name, password_hash) values ('bench', 'bench', 'x') returning id`
  const codes = Array.from({ length: LINKS }, (_, i) => `b${String(i).padStart(7, '0')}`)
  await sql`insert into links (code, user_id, url, location)
    select c, ${user.id}, 'https://example.com/' || c, 'https://example.com/' || c from unnest(${codes}::text[]) as c`
  const log = createLogger('warn', (line) => process.stderr.write(line + '\n'))
  const countryOf = await openCountries(undefined, log)
  const kinds = {
    'VISIT_STATS=on, breakdowns': new VisitCounter(sql, log, { flushMs: 60_000, stats: true, trustProxy: undefined, countryOf }),
    'VISIT_STATS=off': new VisitCounter(sql, log, { flushMs: 60_000, stats: false, trustProxy: undefined }),
  }
  const times = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]))
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? Object.entries(kinds) : Object.entries(kinds).reverse()
    for (const [label, counter] of order) {
      for (let k = 0; k < VISITS; k++) {
        const v = (k * 613 + round * 4_096) % 4_096
        counter.record(codes[(v * 7) % LINKS], { userAgent: agent(v), referer: `https://site${v % 8}.example/a?id=${v}`, forwardedFor: undefined, peer: address(v) })
      }
      const started = performance.now()
      await counter.flush()
      times[label].push(performance.now() - started)
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  console.log(`flush of ${VISITS.toLocaleString('en-US')} visits over ${LINKS} links, ${ROUNDS} rounds (PostgreSQL, ${new URL(ADMIN_URL).host}):`)
  for (const [label, xs] of Object.entries(times)) {
    console.log(`  ${label.padEnd(28)} median ${median(xs).toFixed(1)} ms (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)})`)
  }
  const [[, on], [, off]] = Object.entries(times)
  console.log(`  on ÷ off (medians): ${(median(on) / median(off)).toFixed(2)}`)
  const [dims] = await sql`select count(*)::int as n from visit_dims`
  console.log(`  visit_dims rows written: ${dims.n}`)
} finally {
  await sql.end({ timeout: 1 })
  await admin`drop database ${admin(name)}`
  await admin.end({ timeout: 1 })
}
