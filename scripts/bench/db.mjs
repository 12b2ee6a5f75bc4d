// The benchmark's database: a fresh PostgreSQL database (given, or created through an admin URL
// and dropped afterwards) or the embedded PGlite in a temporary DATA_DIR; and seeding it with
// SQL straight into the tables the service's own migrations created.
//
// Codes are deterministic: link i has code base62((i * 2654435761) mod 62^8), 8 characters.
// The multiplier is odd and not a multiple of 31, so it is invertible mod 62^8 = 2^8 * 31^8 and
// distinct i give distinct codes; the bench computes the same codes in JavaScript for wrk, and
// checks a sample against the database.
import { createHash, randomBytes } from 'node:crypto'
import postgres from 'postgres'

export const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const MULTIPLIER = 2654435761n
const MODULUS = 62n ** 8n

export const LINKS_PER_OWNER = 50 // the service's own cap per account

export function codeFor(i) {
  let x = (BigInt(i) * MULTIPLIER) % MODULUS
  let code = ''
  for (let k = 0; k < 8; k++) {
    code = ALPHABET[Number(x % 62n)] + code
    x /= 62n
  }
  return code
}

/** The url (and Location: it is ASCII) of seeded link i: a realistic length, about 70 bytes. */
export const urlFor = (i) => `https://www.example.org/articles/${i}/a-readable-slug?utm_source=bench&utm_medium=link`

/** SQL for the code of link `i` (an expression over a bigint column named i). */
function codeSql(i) {
  const x = `((${i}::bigint * ${MULTIPLIER}) % ${MODULUS})`
  const digits = []
  for (let k = 7; k >= 0; k--) {
    digits.push(`substr('${ALPHABET}', ((${x} / ${62n ** BigInt(k)}) % 62)::int + 1, 1)`)
  }
  return digits.join(' || ')
}

const urlSql = (i) => `'https://www.example.org/articles/' || ${i} || '/a-readable-slug?utm_source=bench&utm_medium=link'`

// ---------------------------------------------------------------------------------------------

/**
 * Decides where the service's data lives, from BENCH_DATABASE_URL, BENCH_ADMIN_URL, or neither.
 * Returns { kind, serviceEnv, describe, open(), version(), cleanup() }.
 */
export async function prepareDatabase({ env, dataDir, say }) {
  const given = env.BENCH_DATABASE_URL?.trim() || undefined
  const admin = env.BENCH_ADMIN_URL?.trim() || undefined
  if (given !== undefined) {
    const sql = pg(given)
    try {
      const [{ n }] = await sql.unsafe(
        `select count(*)::int as n from information_schema.tables where table_schema = 'public'`,
      )
      if (n !== 0) {
        throw new Error(
          `BENCH_DATABASE_URL must name an empty database (it has ${n} tables in schema public): ` +
            'the bench fills it and leaves the rows there. Give BENCH_ADMIN_URL instead to have a ' +
            'fresh database created and dropped.',
        )
      }
    } finally {
      await sql.end({ timeout: 2 })
    }
    say(`database: PostgreSQL at ${redact(given)} (given by BENCH_DATABASE_URL; left in place afterwards)`)
    return postgresDb(given, `PostgreSQL, database given by BENCH_DATABASE_URL`, async () => {})
  }
  if (admin !== undefined) {
    const name = `bench_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`
    const adminSql = pg(admin)
    await adminSql.unsafe(`create database "${name}"`)
    await adminSql.end({ timeout: 2 })
    const url = new URL(admin)
    url.pathname = `/${name}`
    say(`database: PostgreSQL, fresh database ${name} created through BENCH_ADMIN_URL (${redact(admin)}); dropped at the end`)
    return postgresDb(url.toString(), `PostgreSQL, fresh database ${name} (created for this run, dropped after)`, async () => {
      const sql = pg(admin)
      try {
        await sql.unsafe(`drop database if exists "${name}" with (force)`)
      } finally {
        await sql.end({ timeout: 2 })
      }
    })
  }
  say(`database: embedded PGlite (the default without DATABASE_URL), fresh DATA_DIR ${dataDir}`)
  say('  for real PostgreSQL: BENCH_ADMIN_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench')
  return {
    kind: 'embedded',
    describe: 'embedded PGlite (DATABASE_URL unset), fresh DATA_DIR in a temporary directory',
    serviceEnv: { DATA_DIR: dataDir },
    async open() {
      // Only while the service is stopped: it holds the data directory exclusively.
      const { PGlite } = await import('@electric-sql/pglite')
      const db = await PGlite.create(dataDir)
      return {
        query: async (text) => (await db.query(text)).rows,
        close: () => db.close(),
      }
    },
    cleanup: async () => {},
  }
}

function postgresDb(url, describe, cleanup) {
  return {
    kind: 'postgresql',
    describe,
    url,
    serviceEnv: { DATABASE_URL: url },
    async open() {
      const sql = pg(url)
      return { query: (text) => sql.unsafe(text), close: () => sql.end({ timeout: 5 }) }
    },
    cleanup,
  }
}

const pg = (url) => postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10, fetch_types: false })

export function redact(url) {
  try {
    const u = new URL(url)
    if (u.password !== '') u.password = '***'
    return u.toString()
  } catch {
    return '(unparsable URL)'
  }
}

// ---------------------------------------------------------------------------------------------

export async function databaseVersion(db) {
  const [{ v }] = await db.query(`select version() as v`)
  return String(v).split(' on ')[0].split(',')[0]
}

/** Inserts users {prefix}{from..to} sharing one password hash. */
async function insertUsers(db, prefix, from, to, passwordHash) {
  await db.query(`
    insert into users (username, display_name, password_hash)
    select '${prefix}' || n, 'Bench ${prefix} ' || n, '${passwordHash}'
    from generate_series(${from}, ${to}) as n`)
}

/** Inserts links i = from..to, link i owned by {prefix}{1 + floor((i - base) / 50)}. */
async function insertLinks(db, prefix, base, from, to) {
  await db.query(`
    insert into links (code, user_id, url, location)
    select ${codeSql('s.i')}, u.id, ${urlSql('s.i')}, ${urlSql('s.i')}
    from generate_series(${from}, ${to}) as s(i)
    join users u on u.username = '${prefix}' || (1 + (s.i - ${base}) / ${LINKS_PER_OWNER})`)
}

/** A session for each named user; returns the bearer tokens, in the order of `usernames`. */
async function insertSessions(db, usernames) {
  const tokens = usernames.map(() => randomBytes(32).toString('base64url'))
  for (let start = 0; start < usernames.length; start += 5_000) {
    const values = usernames
      .slice(start, start + 5_000)
      .map((name, k) => `('${name}', '${createHash('sha256').update(tokens[start + k]).digest('hex')}')`)
      .join(',\n')
    await db.query(`
      insert into sessions (token_hash, user_id, expires_at)
      select decode(v.h, 'hex'), u.id, now() + interval '7 days'
      from (values ${values}) as v(name, h) join users u on u.username = v.name`)
  }
  return tokens
}

/** Every code in `codes` must be a live link: a check that JavaScript and SQL agree. */
async function checkCodes(db, codes, expectLive) {
  const list = codes.map((c) => `'${c}'`).join(',')
  const [{ n }] = await db.query(`select count(*)::int as n from links where code in (${list}) and deleted_at is null`)
  if (n !== expectLive) throw new Error(`seed check: ${n} of ${codes.length} sample codes are live links, expected ${expectLive}`)
}

/** Links of the delete points: beyond the 1M set, so that no code is seeded twice. */
const DOOMED_BASE = 2_000_001
/** Links with a visit cap (max_visits) no round reaches: beyond the delete points' links. */
const CAPPED_BASE = 3_000_001
const NEVER_REACHED = 1e12
/** Links with 3 redirect rules that no bench request matches (it sends no User-Agent or Accept-Language, from 127.0.0.1): beyond the capped ones. */
const RULED_BASE = 4_000_001
const UNMATCHED_RULES = JSON.stringify([
  { if: { device: 'ios' }, url: 'https://apps.example/ios' },
  { if: { language: 'de' }, url: 'https://example.de/' },
  { if: { country: 'DE' }, url: 'https://example.de/country' },
])

/**
 * The small set: `owners` accounts with 50 links each (links 1..owners*50), `creators` accounts
 * with none (for the create-link points: 50 creations each before the cap), `doomed` accounts
 * with 50 links each (for the delete points), and a session for every one of them. Returns the
 * tokens, and the (token, code) pairs of the doomed links.
 */
export async function seedSmall(db, { owners, creators, doomed, passwordHash }) {
  await insertUsers(db, 'owner', 1, owners, passwordHash)
  await insertLinks(db, 'owner', 1, 1, owners * LINKS_PER_OWNER)
  await insertUsers(db, 'creator', 1, creators, passwordHash)
  await insertUsers(db, 'doomed', 1, doomed, passwordHash)
  await insertLinks(db, 'doomed', DOOMED_BASE, DOOMED_BASE, DOOMED_BASE + doomed * LINKS_PER_OWNER - 1)
  await insertUsers(db, 'capped', 1, owners, passwordHash)
  await insertLinks(db, 'capped', CAPPED_BASE, CAPPED_BASE, CAPPED_BASE + owners * LINKS_PER_OWNER - 1)
  await db.query(`update links set max_visits = ${NEVER_REACHED} where id in (select l.id from links l join users u on u.id = l.user_id where u.username like 'capped%')`)
  await db.query(`insert into link_caps (code, visits_left) select code, max_visits from links where max_visits is not null`)
  const cappedLinks = Array.from({ length: owners * LINKS_PER_OWNER }, (_, k) => CAPPED_BASE + k)
  await insertUsers(db, 'ruled', 1, owners, passwordHash)
  await insertLinks(db, 'ruled', RULED_BASE, RULED_BASE, RULED_BASE + owners * LINKS_PER_OWNER - 1)
  await db.query(`update links set rules = '${UNMATCHED_RULES}'::jsonb where user_id in (select id from users where username like 'ruled%')`)
  const ruledLinks = Array.from({ length: owners * LINKS_PER_OWNER }, (_, k) => RULED_BASE + k)
  const ownerTokens = await insertSessions(db, Array.from({ length: owners }, (_, k) => `owner${k + 1}`))
  const creatorTokens = await insertSessions(db, Array.from({ length: creators }, (_, k) => `creator${k + 1}`))
  const doomedTokens = await insertSessions(db, Array.from({ length: doomed }, (_, k) => `doomed${k + 1}`))
  const doomedLinks = Array.from({ length: doomed * LINKS_PER_OWNER }, (_, k) => [doomedTokens[Math.floor(k / LINKS_PER_OWNER)], codeFor(DOOMED_BASE + k)])
  const links = Array.from({ length: owners * LINKS_PER_OWNER }, (_, k) => k + 1)
  await checkCodes(db, links.filter((i) => i % 97 === 1).map(codeFor), links.filter((i) => i % 97 === 1).length)
  const unknown = Array.from({ length: 1_000 }, (_, k) => 100_000_001 + k) // never seeded
  await checkCodes(db, unknown.slice(0, 200).map(codeFor), 0)
  await checkCodes(db, doomedLinks.filter((_, k) => k % 997 === 0).map(([, c]) => c), Math.ceil(doomedLinks.length / 997))
  await checkCodes(db, cappedLinks.filter((i) => i % 97 === 1).map(codeFor), cappedLinks.filter((i) => i % 97 === 1).length)
  await checkCodes(db, ruledLinks.filter((i) => i % 97 === 1).map(codeFor), ruledLinks.filter((i) => i % 97 === 1).length)
  return { links, unknown, ownerTokens, creatorTokens, doomedLinks, cappedLinks, ruledLinks }
}

/** The large set: links from..to (to = 1,000,000), 50 to an account, in batches with progress. */
export async function seedLarge(db, { from, to, passwordHash, say }) {
  const owners = Math.ceil((to - from + 1) / LINKS_PER_OWNER)
  await insertUsers(db, 'bulk', 1, owners, passwordHash)
  const batch = 100_000
  const started = Date.now()
  for (let a = from; a <= to; a += batch) {
    const b = Math.min(to, a + batch - 1)
    await insertLinks(db, 'bulk', from, a, b)
    say(`  seeded links ${a.toLocaleString('en-US')}..${b.toLocaleString('en-US')} (${((Date.now() - started) / 1000).toFixed(0)} s)`)
  }
  await db.query('analyze links')
  const sample = []
  for (let i = from; i <= to; i += 4_999) sample.push(i)
  await checkCodes(db, sample.map(codeFor), sample.length)
  const [{ n }] = await db.query(`select count(*)::int as n from links`)
  return { total: n }
}

export async function totalVisits(db) {
  const [{ n }] = await db.query(`select coalesce(sum(visits), 0)::float8 as n from links`)
  return Number(n)
}
