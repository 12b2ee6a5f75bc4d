// The node:http ceiling for `npm run bench`: the least a Node server can do per redirect.
// GET /r/{code} answers 302 with the Location from a Map (loaded from a "code<TAB>location" file)
// and the headers every answer of the service must carry (cache-control: no-store, a random
// X-Request-Id of the same length, nosniff: contract §1 and §5), so both send the same bytes;
// any other code answers 404 with the service's JSON body. No routing, validation, logging or database.
//   CEILING_LINKS=file CEILING_PORT=n [CEILING_WORKERS=2] node scripts/bench/ceiling.mjs
// Prints {"msg":"listening","url":...} once every process listens; SIGTERM stops it.
import cluster from 'node:cluster'
import { randomFillSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'

const port = Number(process.env.CEILING_PORT)
const workers = Number(process.env.CEILING_WORKERS ?? '1')
const url = `http://127.0.0.1:${port}`
const listening = () => process.stdout.write(JSON.stringify({ msg: 'listening', url, workers, pid: process.pid }) + '\n')

if (workers > 1 && cluster.isPrimary) {
  let ready = 0
  let stopping = false
  for (let i = 0; i < workers; i++) cluster.fork()
  cluster.on('listening', () => {
    if (++ready === workers) listening()
  })
  cluster.on('exit', (_worker, code) => {
    if (!stopping) {
      process.stderr.write(`ceiling worker died (${code})\n`)
      process.exit(1)
    }
  })
  process.on('SIGTERM', () => {
    stopping = true
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM')
    setTimeout(() => process.exit(0), 200).unref()
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0)
    })
  })
} else {
  const links = new Map()
  for (const line of readFileSync(process.env.CEILING_LINKS, 'utf8').split('\n')) {
    const tab = line.indexOf('\t')
    if (tab > 0) links.set(line.slice(0, tab), line.slice(tab + 1))
  }
  const notFound = '{"code":"LINK_NOT_FOUND","message":"no such link"}'
  // Request ids as cheaply as they come: random bytes drawn 512 ids at a time.
  const pool = Buffer.alloc(16 * 512)
  let offset = pool.length
  const requestId = () => {
    if (offset === pool.length) {
      randomFillSync(pool)
      offset = 0
    }
    return pool.toString('hex', offset, (offset += 16))
  }
  const server = createServer((req, res) => {
    const target = req.url
    const location = target.startsWith('/r/') ? links.get(target.slice(3)) : undefined
    if (location !== undefined) {
      res.writeHead(302, ['location', location, 'cache-control', 'no-store', 'content-length', '0', 'x-request-id', requestId(), 'x-content-type-options', 'nosniff'])
      res.end()
      return
    }
    res.writeHead(404, ['content-type', 'application/json; charset=utf-8', 'content-length', String(notFound.length), 'x-request-id', requestId(), 'x-content-type-options', 'nosniff'])
    res.end(notFound, 'latin1')
  })
  server.listen(port, '127.0.0.1', () => {
    if (!cluster.isWorker) listening()
  })
  process.on('SIGTERM', () => process.exit(0))
}
