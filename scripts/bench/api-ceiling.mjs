// The API ceiling for `npm run bench`: a bare node:http + postgres server that does the
// least SQL each link operation needs, one statement a request, which checks the bearer session
// and does the work (and notifies other nodes, as the operation must). No router, validation,
// rate limit, cache, deadline or logging. Answers carry the service's JSON shape.
//   CEILING_PORT=n CEILING_DATABASE_URL=url node scripts/bench/api-ceiling.mjs
// Prints {"msg":"listening",...} once listening; SIGTERM stops it.
import { createHash, randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import postgres from 'postgres'
import { LINK_CHANNEL } from '../../dist/db/channels.js'

const port = Number(process.env.CEILING_PORT)
const sql = postgres(process.env.CEILING_DATABASE_URL, { max: 10, onnotice: () => {} })
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

const code = () => Array.from(randomBytes(8), (b) => ALPHABET[b % 62]).join('')
const tokenHash = (req) => createHash('sha256').update((req.headers.authorization ?? '').slice(7)).digest()
const present = (l) => ({
  code: l.code,
  url: l.url,
  short_url: `http://localhost:${port}/r/${l.code}`,
  created_at: l.created_at.toISOString(),
  updated_at: l.updated_at.toISOString(),
  visits: Number(l.visits),
  last_visited_at: l.last_visited_at?.toISOString() ?? null,
  expires_at: l.expires_at?.toISOString() ?? null,
})
const cols = sql`l.code, l.url, l.created_at, l.updated_at, l.visits, l.last_visited_at, l.expires_at`
const live = (h) => sql`s.token_hash = ${h} and s.expires_at > now()`

async function body(req) {
  const chunks = []
  for await (const c of req) chunks.push(c)
  return JSON.parse(Buffer.concat(chunks).toString())
}

async function handle(req) {
  const h = tokenHash(req)
  const [, , , , param] = req.url.split('/') // /api/v1/links/{code}
  if (req.method === 'POST') {
    const { url } = await body(req)
    const [l] = await sql`
      with l as (
        insert into links (code, user_id, url, location)
        select ${code()}, s.user_id, ${url}, ${url} from sessions s where ${live(h)}
        returning *
      )
      select ${cols}, pg_notify(${LINK_CHANNEL}, l.code) from l`
    return l ? [201, present(l)] : [401, { code: 'UNAUTHORIZED' }]
  }
  if (req.method === 'GET') {
    const rows = await sql`
      select ${cols} from links l join sessions s on s.user_id = l.user_id
      where ${live(h)} and l.deleted_at is null order by l.id desc`
    return [200, { links: rows.map(present) }]
  }
  if (req.method === 'PATCH') {
    const { url } = await body(req)
    const [l] = await sql`
      with l as (
        update links l set url = ${url}, location = ${url}, updated_at = now() from sessions s
        where ${live(h)} and l.user_id = s.user_id and l.code = ${param} and l.deleted_at is null
        returning l.*
      )
      select ${cols}, pg_notify(${LINK_CHANNEL}, l.code) from l`
    return l ? [200, present(l)] : [404, { code: 'LINK_NOT_FOUND' }]
  }
  if (req.method === 'DELETE') {
    const rows = await sql`
      with l as (
        update links l set user_id = null, url = null, location = null, deleted_at = now() from sessions s
        where ${live(h)} and l.user_id = s.user_id and l.code = ${param} and l.deleted_at is null
        returning l.code
      )
      select pg_notify(${LINK_CHANNEL}, l.code) from l`
    return rows.length === 1 ? [204, undefined] : [404, { code: 'LINK_NOT_FOUND' }]
  }
  return [405, { code: 'METHOD_NOT_ALLOWED' }]
}

const server = createServer((req, res) => {
  handle(req).then(
    ([status, payload]) => {
      const text = payload === undefined ? '' : JSON.stringify(payload)
      res.writeHead(status, payload === undefined ? {} : { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) })
      res.end(text)
    },
    (err) => {
      res.writeHead(500)
      res.end(String(err))
    },
  )
})
server.listen(port, '127.0.0.1', () => process.stdout.write(JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${port}` }) + '\n'))
process.on('SIGTERM', () => sql.end({ timeout: 1 }).finally(() => process.exit(0)))
