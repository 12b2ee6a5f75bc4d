// The failover drill (scripts/fault.mjs failover, and test/http/scale.test.ts): writes and
// redirects run against service nodes whose DATABASE_URL names the primary and its synchronous
// standby (target_session_attrs=read-write); the primary is killed, the standby promoted a few
// seconds later. Reports what clients saw per phase, how long after the promotion writes came
// back, the slowest answer, whether the cached redirect ever failed, whether each node's change
// feed is up again (and carries a change across nodes), and acknowledged writes lost.
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import postgres from 'postgres'

/**
 * `nodes`: base URLs of the service nodes (TRUST_PROXY must include 127.0.0.1); `kill` stops the
 * primary; `promote` promotes the standby and resolves once it takes writes; `newPrimaryUrl`
 * reads the links back afterwards.
 */
export async function failoverDrill({ nodes, kill, promote, newPrimaryUrl, clients = 8, promoteAfterMs = 3_000, afterMs = 5_000 }) {
  const post = (base, path, body, token, ip = '10.9.0.1') =>
    fetch(base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': ip, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    })
  const users = []
  for (let i = 0; i < clients; i++) {
    const username = `f${randomBytes(5).toString('hex')}`
    const ip = `10.9.2.${i + 1}`
    const base = nodes[i % nodes.length]
    await (await post(base, '/api/v1/users', { username, password: 'correct horse', display_name: 'Drill' }, undefined, ip)).arrayBuffer()
    const { token } = await (await post(base, '/api/v1/auth/login', { username, password: 'correct horse' }, undefined, ip)).json()
    users.push(token)
  }
  const hot = (await (await post(nodes[0], '/api/v1/links', { url: 'https://example.com/hot' }, users[0])).json()).code
  // Cached on every node from now on; each node hears of it by its change feed.
  for (const base of nodes) await (await fetch(`${base}/r/${hot}`, { redirect: 'manual' })).arrayBuffer()

  const acknowledged = new Set()
  const stats = new Map()
  let phase = 'before (primary up)'
  const creates = [] // { startedAt, answeredAt, status }
  let slowestMs = 0
  const note = (kind, status, started) => {
    const ms = performance.now() - started
    const s = stats.get(phase) ?? stats.set(phase, { creates: {}, redirects: {} }).get(phase)
    s[kind][status] = (s[kind][status] ?? 0) + 1
    slowestMs = Math.max(slowestMs, ms)
    if (kind === 'creates') creates.push({ startedAt: started, answeredAt: started + ms, status })
  }
  let running = true
  const writer = async (token, i) => {
    const base = nodes[i % nodes.length]
    for (let n = 0; running; n++) {
      const started = performance.now()
      const code = randomBytes(6).toString('base64url').replace(/[-_]/g, 'x').slice(0, 8)
      try {
        const res = await post(base, '/api/v1/links', { url: `https://example.com/${i}/${n}`, code }, token)
        await res.arrayBuffer()
        if (res.status === 201) acknowledged.add(code)
        note('creates', res.status, started)
        if (res.status === 201) {
          // Deleted at once, to stay under the per-account cap; the tombstone still proves the create.
          await (await fetch(`${base}/api/v1/links/${code}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })).arrayBuffer()
        } else await sleep(50)
      } catch {
        note('creates', 'reset', started)
        await sleep(50)
      }
    }
  }
  const redirects = async (base) => {
    while (running) {
      const started = performance.now()
      try {
        const res = await fetch(`${base}/r/${hot}`, { redirect: 'manual', signal: AbortSignal.timeout(30_000) })
        await res.arrayBuffer()
        note('redirects', res.status, started)
      } catch {
        note('redirects', 'reset', started)
      }
      await sleep(20)
    }
  }
  const loops = [...users.map((t, i) => writer(t, i)), ...nodes.map((base) => redirects(base))]

  await sleep(2_000)
  phase = `primary killed (${promoteAfterMs / 1000} s before the promotion)`
  const killedAt = performance.now()
  kill()
  await sleep(promoteAfterMs)
  phase = 'standby promoted'
  await promote()
  const promotedAt = performance.now()
  const firstWrite = async () => {
    for (;;) {
      const ok = creates.find((c) => c.status === 201 && c.startedAt > killedAt)
      if (ok !== undefined) return ok
      if (performance.now() - promotedAt > 60_000) return undefined
      await sleep(50)
    }
  }
  const back = await firstWrite()
  phase = `after writes came back (${afterMs / 1000} s)`
  await sleep(afterMs)
  running = false
  await Promise.all(loops)

  // Each node's change feed re-subscribed on the new primary: /healthz says so, and a change
  // made through the first node reaches the others' cached redirect.
  const feeds = []
  for (const base of nodes) {
    let state = 'unknown'
    for (const until = Date.now() + 15_000; Date.now() < until; await sleep(200)) {
      state = (await (await fetch(`${base}/healthz`)).json().catch(() => ({}))).change_feed
      if (state === 'up') break
    }
    feeds.push(state)
  }
  const patched = await fetch(`${nodes[0]}/api/v1/links/${hot}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${users[0]}` },
    body: JSON.stringify({ url: 'https://example.com/after-failover' }),
  })
  await patched.arrayBuffer()
  let changeCarried = patched.status === 200
  for (const base of nodes.slice(1)) {
    let location
    for (const until = Date.now() + 2_000; Date.now() < until && location !== 'https://example.com/after-failover'; await sleep(50)) {
      location = (await fetch(`${base}/r/${hot}`, { redirect: 'manual' })).headers.get('location')
    }
    changeCarried &&= location === 'https://example.com/after-failover'
  }

  // Every acknowledged create must be on the new primary (live or as a tombstone).
  const check = postgres(newPrimaryUrl, { max: 1, onnotice: () => {} })
  const codes = [...acknowledged]
  const [{ n }] = await check`select count(*)::int as n from links where code = any(${codes})`
  await check.end({ timeout: 1 })
  const redirectFailures = [...stats.values()].reduce((sum, s) => sum + Object.entries(s.redirects).filter(([k]) => k !== '302').reduce((a, [, v]) => a + v, 0), 0)
  return {
    stats,
    acknowledged: codes.length,
    lost: codes.length - n,
    /** ms from the promotion to the first acknowledged create (undefined: none within 60 s) */
    writesBackMs: back === undefined ? undefined : Math.max(0, Math.round(back.answeredAt - promotedAt)),
    /** ms from the kill to the first acknowledged create */
    downtimeMs: back === undefined ? undefined : Math.round(back.answeredAt - killedAt),
    slowestMs: Math.round(slowestMs),
    redirectFailures,
    feeds,
    changeCarried,
  }
}

/** The report as Markdown, for docs/scale.md. */
export function formatReport(r) {
  const fmt = (o) => Object.entries(o).map(([k, v]) => `${k}×${v}`).join(' ') || '-'
  const lines = ['| phase | creates | redirects (cached code) |', '|---|---|---|']
  for (const [p, s] of r.stats) lines.push(`| ${p} | ${fmt(s.creates)} | ${fmt(s.redirects)} |`)
  lines.push('')
  lines.push(`writes back ${r.writesBackMs ?? 'never'} ms after the promotion (${r.downtimeMs ?? '-'} ms after the kill); slowest answer ${r.slowestMs} ms`)
  lines.push(`cached redirect failures: ${r.redirectFailures}; change feeds after: ${r.feeds.join(', ')}; a change carried across nodes: ${r.changeCarried ? 'yes' : 'no'}`)
  lines.push(`acknowledged creates: ${r.acknowledged}, lost: ${r.lost}`)
  return lines.join('\n')
}
