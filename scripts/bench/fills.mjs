// Cold reads while links are written elsewhere: how many of the reads the redirect cache keeps.
// A service of a build's dist/ (embedded) with 1,000 links never visited; one client edits a link
// of its own as fast as the service takes it (each PATCH tells the cache a code changed), while
// 16 others visit the 1,000 codes once, then once again. A visit of the second round that is not
// a cache hit is a read of the first whose fill the cache refused.
//   node scripts/bench/fills.mjs [dist folder=dist]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { api, freePort, quickServiceEnv, ROOT, startLogged, stopChild } from './lib.mjs'

const dist = resolve(process.argv[2] ?? join(ROOT, 'dist'))
const LINKS = 1_000
const tmp = mkdtempSync(join(tmpdir(), 'bench-fills-'))
const metricsPort = await freePort()
const proc = await startLogged('service', process.execPath, [join(dist, 'server.js')], { env: { ...quickServiceEnv(join(tmp, 'data')), METRICS_PORT: String(metricsPort), ACCESS_LOG: 'api' }, logFile: join(tmp, 'service.log') })
const base = proc.listening.url

async function account(name) {
  const password = 'correct horse battery'
  await api(base, 'POST', '/api/v1/users', { body: { username: name, password, display_name: 'Bench' } })
  return (await api(base, 'POST', '/api/v1/auth/login', { body: { username: name, password } })).body.token
}

const misses = async () => {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  return Number(/redirects_total\{outcome="miss"\} (\d+)/.exec(text)[1])
}

try {
  const codes = []
  for (let a = 0; codes.length < LINKS; a++) {
    const token = await account(`fills${a}`)
    for (let i = 0; i < 50 && codes.length < LINKS; i++) codes.push((await api(base, 'POST', '/api/v1/links', { token, body: { url: `https://example.com/${a}/${i}` } })).body.code)
  }
  const editor = await account('editor')
  const edited = (await api(base, 'POST', '/api/v1/links', { token: editor, body: { url: 'https://example.com/edited/0' } })).body.code
  let writing = true
  let writes = 0
  const writer = (async () => {
    while (writing) await api(base, 'PATCH', `/api/v1/links/${edited}`, { token: editor, body: { url: `https://example.com/edited/${++writes}` } })
  })()
  const round = async () => {
    let next = 0
    const started = performance.now()
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < codes.length) await (await fetch(`${base}/r/${codes[next++]}`, { redirect: 'manual' })).arrayBuffer()
    }))
    return performance.now() - started
  }
  const before = await misses()
  const w0 = writes
  const ms = await round()
  const during = writes - w0
  const first = (await misses()) - before
  await round()
  const again = (await misses()) - before - first
  writing = false
  await writer
  console.log(`${dist}: round 1 read ${first} of ${LINKS} codes from the database in ${Math.round(ms)} ms, while ${during} link writes were made (${Math.round(during / (ms / 1000))}/s); round 2 read ${again} again (${((100 * again) / LINKS).toFixed(1)}%: fills refused)`)
} finally {
  await stopChild(proc.child)
  rmSync(tmp, { recursive: true, force: true })
}
