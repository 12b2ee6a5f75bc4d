// The transparency report's figures: counts per UTC month, nothing that names a person, a link or
// a host. Reports from the reports table (created_at, resolved_at); stops and disabled accounts
// from trust_events (sql/0028), recorded as they happen so that a later enable does not erase them;
// stops by health checks from link_check_stops, one row per stop.
import type { Sql } from '../db/types.js'

export interface MonthFigures {
  /** "YYYY-MM" */
  month: string
  reports_received: number
  reports_resolved: number
  /** seconds from a report to the operator's action (resolved other than dismissed), by month of the action; null without one */
  time_to_action_median_seconds: number | null
  time_to_action_p90_seconds: number | null
  links_stopped_by_operator: number
  links_stopped_by_threat_feeds: number
  links_stopped_by_health_checks: number
  accounts_disabled: number
}

/** Links stopped by health checks (a redirect chain reaching a blocked host), per UTC month from `fromMonth` ("YYYY-MM"). */
export async function healthCheckStopsByMonth(sql: Sql, fromMonth: string): Promise<Array<{ month: string; n: number }>> {
  return sql<Array<{ month: string; n: number }>>`
    select to_char(stopped_at at time zone 'UTC', 'YYYY-MM') as month, count(*)::int as n
    from link_check_stops
    where stopped_at >= (${fromMonth} || '-01')::timestamp at time zone 'UTC'
    group by 1`
}

/** The last `months` UTC months, the current one included, oldest first. */
export async function monthlyFigures(sql: Sql, months: number): Promise<MonthFigures[]> {
  const rows = await sql<Array<Omit<MonthFigures, 'links_stopped_by_health_checks'>>>`
    with bounds as (
      select to_char(m, 'YYYY-MM') as month, m at time zone 'UTC' as starts, (m + interval '1 month') at time zone 'UTC' as ends
      from generate_series(date_trunc('month', now() at time zone 'UTC') - make_interval(months => ${months - 1}::int),
                           date_trunc('month', now() at time zone 'UTC'), interval '1 month') as m
    ), acted as (
      select b.month,
             percentile_cont(0.5) within group (order by extract(epoch from r.resolved_at - r.created_at)) as median,
             percentile_cont(0.9) within group (order by extract(epoch from r.resolved_at - r.created_at)) as p90
      from bounds b join reports r on r.resolved_at >= b.starts and r.resolved_at < b.ends and r.resolution <> 'dismiss'
      group by b.month
    )
    select b.month,
      (select count(*) from reports r where r.created_at >= b.starts and r.created_at < b.ends)::int as reports_received,
      (select count(*) from reports r where r.resolved_at >= b.starts and r.resolved_at < b.ends)::int as reports_resolved,
      round(a.median)::float8 as time_to_action_median_seconds,
      round(a.p90)::float8 as time_to_action_p90_seconds,
      (select coalesce(sum(e.n), 0) from trust_events e where e.at >= b.starts and e.at < b.ends
        and e.kind in ('link_disabled', 'link_blocked_manual'))::int as links_stopped_by_operator,
      (select coalesce(sum(e.n), 0) from trust_events e where e.at >= b.starts and e.at < b.ends
        and e.kind = 'link_blocked_feed')::int as links_stopped_by_threat_feeds,
      (select coalesce(sum(e.n), 0) from trust_events e where e.at >= b.starts and e.at < b.ends
        and e.kind = 'account_disabled')::int as accounts_disabled
    from bounds b left join acted a on a.month = b.month
    order by b.month`
  const health = new Map((await healthCheckStopsByMonth(sql, rows[0]!.month)).map((h) => [h.month, h.n]))
  return rows.map((r) => ({ ...r, links_stopped_by_health_checks: health.get(r.month) ?? 0 }))
}
