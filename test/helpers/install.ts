// An installation of its own for tests that move data (export/import, migrate, backups): an empty
// store on the engine of this pass (a fresh embedded DATA_DIR, or a fresh PostgreSQL database when
// DATABASE_URL is set), and data put in through the API as users would.
import { rmSync } from 'node:fs'
import { call, newLink, newUser, type User } from './api.js'
import { runCli } from './cli.js'
import { freshDatabase } from './pg.js'
import { freshDataDir, startServer } from './server.js'

export interface Store {
  /** DATA_DIR or DATABASE_URL: for startServer and runCli alike */
  env: Record<string, string>
  drop(): Promise<void>
}

/** The embedded database in `dir`, in either pass: startServer would otherwise take DATABASE_URL (empty is unset). */
export function embedded(dir: string): Record<string, string> {
  return { DATA_DIR: dir, DATABASE_URL: '' }
}

/**
 * An export's lines that name its data: without the header, which names the time of the export,
 * and without the digest in the last line, which covers the header.
 */
export function exportRows(stream: string): string[] {
  const lines = stream.trimEnd().split('\n').slice(1)
  return [...lines.slice(0, -1), JSON.stringify({ counts: JSON.parse(lines.at(-1)!).counts })]
}

export async function freshStore(): Promise<Store> {
  if (process.env.DATABASE_URL === undefined) {
    const dir = await freshDataDir()
    return { env: embedded(dir), drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const db = await freshDatabase()
  return { env: { DATABASE_URL: db.url }, drop: db.drop }
}

export interface Seeded {
  users: User[]
  /** a live link with 3 visits (2 with a referrer) */
  visited: string
  /** a live link never visited */
  quiet: string
  /** a deleted link's code */
  deleted: string
}

/** Two users, three links (one deleted, one visited), through a server on `env`, then stopped; a blocked host. */
export async function seedInstall(env: Record<string, string>): Promise<Seeded> {
  const srv = await startServer(env)
  let users: User[]
  let visited: string, quiet: string, deleted: string
  try {
    users = [await newUser(srv.url), await newUser(srv.url, 'another secret')]
    visited = (await newLink(srv.url, users[0]!.token, 'https://example.com/visited?q=1')).code
    quiet = (await newLink(srv.url, users[0]!.token, 'https://example.org/ünïcode')).code
    const rules = [{ if: { device: 'ios' }, url: 'https://apps.example/ios' }]
    if ((await call(srv.url, 'PATCH', `/api/v1/links/${visited}`, { token: users[0]!.token, body: { rules } })).status !== 200) throw new Error('rules failed')
    deleted = (await newLink(srv.url, users[1]!.token, 'https://example.net/gone')).code
    if ((await call(srv.url, 'DELETE', `/api/v1/links/${deleted}`, { token: users[1]!.token })).status !== 204) throw new Error('delete failed')
    // An endpoint that nothing here sends to: it moves with its secret, its deliveries do not.
    const hook = await call(srv.url, 'POST', '/api/v1/webhooks', { token: users[0]!.token, body: { url: 'https://hooks.example/link-service', events: ['link.expired'] } })
    if (hook.status !== 201) throw new Error(`webhook failed: ${hook.text}`)
    for (const referer of ['https://news.example/a', 'https://news.example/b', undefined]) {
      const headers: Record<string, string> = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0' }
      if (referer !== undefined) headers.referer = referer
      if ((await call(srv.url, 'GET', `/r/${visited}`, { headers })).status !== 302) throw new Error('redirect failed')
    }
  } finally {
    // Closing writes the counted visits.
    await srv.close()
  }
  const blocked = await runCli(['block', 'add', 'blocked.example'], env)
  if (blocked.status !== 0) throw new Error(`block add failed: ${blocked.stderr}`)
  return { users, visited, quiet, deleted }
}

/** The `link-service export` stream of `store` (with `args`), checked to have succeeded. */
export async function exported(store: Store, ...args: string[]): Promise<string> {
  const r = await runCli(['export', ...args], store.env)
  if (r.status !== 0) throw new Error(`export failed (${r.status}): ${r.stderr}`)
  return r.stdout
}

/** A fresh store seeded as users would (seedInstall), and its export: the source of the transfer tests. */
export async function seededExport(...args: string[]): Promise<{ source: Store; seeded: Seeded; stream: string }> {
  const source = await freshStore()
  const seeded = await seedInstall(source.env)
  return { source, seeded, stream: await exported(source, ...args) }
}
