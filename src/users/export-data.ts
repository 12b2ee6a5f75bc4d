// What a person's own export holds, read from the database a piece at a time: the account and its
// links whole (at most MAX_LINKS_PER_ACCOUNT), a link's statistics one link at a time, deliveries a
// page at a time. No read stays open while the client takes its time: each is a short query.
// Never read here: password hashes (a link's or the account's), session token digests, webhook secrets.
import type { Sql } from '../db/types.js'
import { listLinks, type LinkRow } from '../links/queries.js'
import type { DayCounts, DimCount } from '../stats/queries.js'
import { estimate } from '../stats/sketch.js'

/** Deliveries read per query. */
const DELIVERY_PAGE = 500

export interface ExportAccount {
  id: string
  username: string
  display_name: string
  created_at: Date
  updated_at: Date
  disabled: boolean
}

export interface ExportSession {
  id: string
  created_at: Date
  expires_at: Date
  last_used_at: Date
}

export interface ExportWebhook {
  id: string
  url: string
  events: string[]
  enabled: boolean
  disabled_reason: string | null
  failing_since: Date | null
  created_at: Date
  updated_at: Date
}

export interface ExportDelivery {
  id: string
  event: string
  data: unknown
  created_at: Date
  state: string
  next_attempt_at: Date
  attempts: Array<{ attempted_at: string; status_code: number | null; error: string | null; duration_ms: number }>
}

export interface LinkStatistics {
  days: DayCounts[]
  referrers: Array<{ day: string; host: string; visits: number }>
  breakdowns: DimCount[]
}

export async function findExportAccount(sql: Sql, userId: string): Promise<ExportAccount | undefined> {
  const [row] = await sql<ExportAccount[]>`
    select id, username, display_name, created_at, updated_at, disabled_at is not null as disabled from users where id = ${userId}`
  return row
}

export const exportLinks = (sql: Sql, userId: string): Promise<LinkRow[]> => listLinks(sql, userId)

/** The owner's link's kept days from `from` to `to` ("YYYY-MM-DD", inclusive), oldest first. */
export async function linkDays(sql: Sql, userId: string, code: string, from: string, to: string): Promise<DayCounts[]> {
  const rows = await sql<Array<{ day: string; humans: number; bots: number; counted: number; sketch: string | null }>>`
    select d.day::text as day, d.humans::float8 as humans, d.bots::float8 as bots, coalesce(d.uniques, 0)::float8 as counted, encode(d.sketch, 'hex') as sketch
    from visit_days d join links l on l.code = d.code and l.user_id = ${userId}
    where d.code = ${code} and d.day between ${from}::date and ${to}::date
    order by d.day`
  // As readStats: the sketch's estimate plus the exact count kept from before the sketches.
  return rows.map((r) => ({ day: r.day, humans: r.humans, bots: r.bots, uniques: r.counted + (r.sketch === null ? 0 : Math.round(estimate(Buffer.from(r.sketch, 'hex')))) }))
}

export function linkReferrers(sql: Sql, userId: string, code: string, from: string, to: string): Promise<LinkStatistics['referrers']> {
  return sql<LinkStatistics['referrers']>`
    select v.day::text as day, v.host, v.visits::float8 as visits
    from visit_referrers v join links l on l.code = v.code and l.user_id = ${userId}
    where v.code = ${code} and v.day between ${from}::date and ${to}::date
    order by v.day, v.visits desc, v.host`
}

export function linkBreakdowns(sql: Sql, userId: string, code: string, from: string, to: string): Promise<DimCount[]> {
  return sql<DimCount[]>`
    select m.day::text as day, m.dim, m.value, m.visits::float8 as visits
    from visit_dims m join links l on l.code = m.code and l.user_id = ${userId}
    where m.code = ${code} and m.day between ${from}::date and ${to}::date
    order by m.day, m.dim, m.visits desc, m.value`
}

/** All three, for one link. */
export async function linkStatistics(sql: Sql, userId: string, code: string, from: string, to: string): Promise<LinkStatistics> {
  return {
    days: await linkDays(sql, userId, code, from, to),
    referrers: await linkReferrers(sql, userId, code, from, to),
    breakdowns: await linkBreakdowns(sql, userId, code, from, to),
  }
}

/** Live sessions: when each began, ends and was last used; never the token's digest. */
export function exportSessions(sql: Sql, userId: string): Promise<ExportSession[]> {
  return sql<ExportSession[]>`
    select id::text as id, created_at, expires_at, last_used_at from sessions
    where user_id = ${userId} and now() <= expires_at order by created_at, id`
}

export function exportWebhooks(sql: Sql, userId: string): Promise<ExportWebhook[]> {
  return sql<ExportWebhook[]>`
    select id::text as id, url, events, enabled, disabled_reason, failing_since, created_at, updated_at
    from webhooks where user_id = ${userId} order by created_at, id`
}

/** The endpoint's kept deliveries (WEBHOOK_RETENTION_DAYS), oldest first, a page at a time. */
export async function* exportDeliveries(sql: Sql, userId: string, webhookId: string): AsyncGenerator<ExportDelivery[]> {
  // The position as text: a Date keeps milliseconds, the column microseconds.
  let after: { at: string; id: string } | undefined
  for (;;) {
    const keyset = after === undefined ? sql`` : sql`and (d.created_at, d.id) > (${after.at}::timestamptz, ${after.id}::uuid)`
    const page = await sql<Array<ExportDelivery & { position: string }>>`
      select d.created_at::text as position, d.id::text as id, d.event, d.data, d.created_at, d.state, d.next_attempt_at,
             coalesce((select jsonb_agg(jsonb_build_object('attempted_at', a.attempted_at, 'status_code', a.status_code,
                                                           'error', a.error, 'duration_ms', a.duration_ms) order by a.id)
                       from webhook_attempts a where a.delivery_id = d.id), '[]'::jsonb) as attempts
      from webhook_deliveries d join webhooks w on w.id = d.webhook_id
      where w.id = ${webhookId} and w.user_id = ${userId} ${keyset}
      order by d.created_at, d.id limit ${DELIVERY_PAGE}`
    if (page.length > 0) yield page.map(({ position: _, ...d }) => d)
    if (page.length < DELIVERY_PAGE) return
    const last = page[page.length - 1]!
    after = { at: last.position, id: last.id }
  }
}
