// Abuse reports in the database (the reports table, file_report): filed by anyone, worked by operators.
import type { Sql } from '../db/types.js'
import { LINK_CHANNEL } from '../db/channels.js'

export const REASONS = ['phishing', 'malware', 'spam', 'other'] as const
export type Reason = (typeof REASONS)[number]
export const RESOLUTIONS = ['disable-link', 'disable-user', 'block-host', 'dismiss'] as const
export type Resolution = (typeof RESOLUTIONS)[number]

export interface NewReport {
  code: string
  reason: Reason
  details: string | null
  /** digest of the client address */
  reporter: string
}

/** 'no-link' for a code that is not a live link; a repeat from one address is 'duplicate' (not stored). */
export async function fileReport(sql: Sql, report: NewReport, suspendAfter: number): Promise<{ outcome: 'filed' | 'duplicate' | 'no-link'; suspended: boolean }> {
  const [row] = await sql<{ r_outcome: 'filed' | 'duplicate' | 'no-link'; r_suspended: boolean }[]>`
    select * from file_report(${report.code}, ${report.reason}, ${report.details}, ${report.reporter}, ${suspendAfter}, ${LINK_CHANNEL})`
  return { outcome: row!.r_outcome, suspended: row!.r_suspended }
}

export interface ReportRow {
  id: number
  code: string
  /** 'link-check': opened by a destination check that found the link leading to a blocked host */
  reason: Reason | 'link-check'
  details: string | null
  created_at: Date
  resolved_at: Date | null
  resolution: Resolution | null
  note: string | null
  /** the link as it is now (null once deleted) */
  url: string | null
  username: string | null
  /** open reports of this link, this one included */
  open_for_link: number
  suspended: boolean
}

/** Oldest first (the queue's order); only open ones with `open`. */
export function listReports(sql: Sql, open: boolean): Promise<ReportRow[]> {
  const only = open ? sql`where r.resolved_at is null` : sql``
  return sql<ReportRow[]>`
    select r.id::float8 as id, r.code, r.reason, r.details, r.created_at, r.resolved_at, r.resolution, r.note,
           l.url, u.username, l.suspended_at is not null as suspended,
           (select count(*)::int from reports o where o.code = r.code and o.resolved_at is null) as open_for_link
    from reports r join links l on l.code = r.code left join users u on u.id = l.user_id
    ${only}
    order by r.id`
}

export async function countOpenReports(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from reports where resolved_at is null`
  return row!.n
}

export interface ReportTarget {
  code: string
  resolved_at: Date | null
  resolution: Resolution | null
  /** the link's live owner and host, null once it is deleted */
  username: string | null
  host: string | null
}

export async function findReport(sql: Sql, id: number): Promise<ReportTarget | undefined> {
  const [row] = await sql<ReportTarget[]>`
    select r.code, r.resolved_at, r.resolution, u.username, l.host_domains[1] as host
    from reports r join links l on l.code = r.code left join users u on u.id = l.user_id
    where r.id = ${id}`
  return row
}

/**
 * Closes every open report of the link with the operator's resolution, and lifts a suspension
 * (an operator has looked: what the link answers now is the operator's decision). Returns how many
 * reports it closed.
 */
export async function resolveReports(sql: Sql, code: string, resolution: Resolution, note: string | null): Promise<number> {
  return sql.begin(async (tx) => {
    const closed = await tx`
      update reports set resolved_at = now(), resolution = ${resolution}, note = ${note}
      where code = ${code} and resolved_at is null`
    const lifted = await tx`update links set suspended_at = null where code = ${code} and suspended_at is not null`
    if (lifted.count > 0) await tx`select pg_notify(${LINK_CHANNEL}, ${code})`
    return closed.count
  })
}
