// /blocklist.txt (PUBLIC_BLOCKLIST=on): the hosts this instance's operators blocked themselves, by
// hand or through a resolved report (source 'manual'), never what came from threat feeds (those
// are someone else's lists to publish). In the hosts-file form BLOCKLIST_SOURCES reads, so two
// instances can subscribe to each other; ETag and Last-Modified let a subscriber ask cheaply.
import { createHash } from 'node:crypto'
import type { Ctx } from '../context.js'
import type { Sql } from '../db/types.js'
import { routeNotFound } from '../http/errors.js'
import { bytes, type Reply } from '../http/reply.js'
import { MANUAL_SOURCE } from '../admin/blocks.js'

/** The manual entries, by host, and when they last changed (an unblock included: sql/0028). */
async function manualBlocks(sql: Sql): Promise<{ hosts: string[]; changedAt: Date }> {
  const hosts = await sql<{ host: string }[]>`select host from blocked_hosts where source = ${MANUAL_SOURCE} order by host`
  const [row] = await sql<{ changed_at: Date }[]>`select changed_at from manual_blocks_changed`
  return { hosts: hosts.map((h) => h.host), changedAt: row?.changed_at ?? new Date(0) }
}

/** RFC 9110 13.1.2: a weak or strong tag in a list, or "*". */
function matchesTag(header: string, etag: string): boolean {
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '')
    return tag === '*' || tag === etag
  })
}

export async function getPublishedBlocklist(ctx: Ctx<'sql' | 'config' | 'baseUrl'>): Promise<Reply> {
  if (!ctx.deps.config.trust.publicBlocklist) throw routeNotFound()
  const { hosts, changedAt } = await manualBlocks(ctx.deps.sql)
  const body = Buffer.from(
    `# Hosts blocked by the operators of ${ctx.deps.baseUrl} (by hand or after a report), not those of threat feeds.\n` +
      `# ${hosts.length} host(s); a host blocks its subdomains too.\n` +
      hosts.map((h) => `0.0.0.0 ${h}\n`).join(''),
  )
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`
  // HTTP dates have whole seconds.
  const lastModified = new Date(Math.floor(changedAt.getTime() / 1000) * 1000)
  const headers = { etag, 'last-modified': lastModified.toUTCString(), 'cache-control': 'public, max-age=300' }
  const { 'if-none-match': ifNoneMatch, 'if-modified-since': ifModifiedSince } = ctx.req.headers
  // RFC 9110 13.2.2: If-None-Match decides when present; If-Modified-Since only without it.
  const unchanged =
    ifNoneMatch !== undefined ? matchesTag(ifNoneMatch, etag) : ifModifiedSince !== undefined && Date.parse(ifModifiedSince) >= lastModified.getTime()
  if (unchanged) return { status: 304, headers }
  return bytes(200, 'text/plain; charset=utf-8', body, headers)
}
