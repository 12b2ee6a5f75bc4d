// Link checks in the database (sql/0026): claims, outcomes, the hosts' turns and back-offs.
import type { Sql } from '../db/types.js'
import { LINK_CHANNEL } from '../db/channels.js'
import type { Rule } from '../links/rules.js'
import type { Finding } from './client.js'

/** How long a claim holds a check: its targets, each up to 6 hops of 10 s, and waits for their hosts */
export const LEASE_SECONDS = 300
/** How long a host's turn is held at most (a request takes at most 10 s) */
const TURN_SECONDS = 15
/** The longest back-off a host gets */
const MAX_BACKOFF_S = 86_400

export interface ClaimedCheck {
  code: string
  url: string
  rules: Rule[]
}

export function claimDueChecks(sql: Sql, node: string, max: number, perMinute: number): Promise<ClaimedCheck[]> {
  return sql<ClaimedCheck[]>`
    select r_code as code, r_url as url, r_rules as rules from claim_link_checks(${node}, ${max}, ${perMinute}, ${LEASE_SECONDS})`
}

/** One link's check, taken now (an owner asked): undefined when there is no live link, false when another node has it. */
export async function claimCheck(sql: Sql, code: string, node: string): Promise<ClaimedCheck | false | undefined> {
  const [row] = await sql<(ClaimedCheck & { claimed: boolean })[]>`
    select code, url, coalesce(rules, '[]'::jsonb) as rules, claim_link_check(code, ${node}, ${LEASE_SECONDS}) as claimed
    from links where code = ${code} and deleted_at is null`
  if (row === undefined) return undefined
  return row.claimed ? { code: row.code, url: row.url, rules: row.rules } : false
}

/** Whether another node holds the link's check now. */
export async function checkClaimed(sql: Sql, code: string): Promise<boolean> {
  const [row] = await sql<{ claimed: boolean }[]>`select claimed_until > now() as claimed from link_checks where code = ${code}`
  return row?.claimed === true
}

export async function recordCheck(sql: Sql, code: string, node: string, f: Finding, intervalS: number, retryS: number): Promise<{ status: string; changed: boolean } | undefined> {
  const [row] = await sql<{ r_status: string; r_changed: boolean }[]>`
    select * from record_link_check(${code}, ${node}, ${f.result}, ${f.httpStatus}, ${f.finalUrl}, ${f.detail}, ${intervalS}, ${retryS}, ${LINK_CHANNEL})`
  return row === undefined ? undefined : { status: row.r_status, changed: row.r_changed }
}

/** Gives back claims not checked (a stopping node): due again at once for any node. */
export async function releaseChecks(sql: Sql, node: string, codes: string[]): Promise<void> {
  if (codes.length === 0) return
  await sql`update link_checks set claimed_by = null, claimed_until = null where code = any(${codes}) and claimed_by = ${node}`
}

/** Whether the host, or a domain above it, is on the block list (manual or a threat feed). */
export async function hostBlocked(sql: Sql, host: string): Promise<boolean> {
  const [row] = await sql<{ blocked: boolean }[]>`select host_blocked(${host}) as blocked`
  return row!.blocked
}

/** The host's turn, when it is free and not backed off: true; else the seconds of its back-off, or 0 when busy. */
export async function takeHost(sql: Sql, host: string): Promise<true | number> {
  const [row] = await sql<{ taken: boolean; wait: number }[]>`
    with taken as (
      insert into link_check_hosts (host, busy_until) values (${host}, now() + make_interval(secs => ${TURN_SECONDS}))
      on conflict (host) do update set busy_until = excluded.busy_until
        where (link_check_hosts.busy_until is null or link_check_hosts.busy_until < now())
          and (link_check_hosts.backoff_until is null or link_check_hosts.backoff_until < now())
      returning 1
    )
    select exists (select 1 from taken) as taken,
           coalesce((select ceil(extract(epoch from backoff_until - now()))::int from link_check_hosts where host = ${host} and backoff_until > now()), 0) as wait`
  return row!.taken ? true : row!.wait
}

export async function freeHost(sql: Sql, host: string): Promise<void> {
  await sql`update link_check_hosts set busy_until = null where host = ${host}`
}

/** A 429: the host is left alone for `seconds`, or for the default doubled at each 429 in a row (a row ends after an hour without one). */
export async function backOffHost(sql: Sql, host: string, seconds: number | undefined, defaultS: number): Promise<number> {
  const fresh = sql`(link_check_hosts.backoff_until is null or link_check_hosts.backoff_until < now() - interval '1 hour')`
  const [row] = await sql<{ wait: number }[]>`
    insert into link_check_hosts (host, backoff_until, backoffs) values (${host}, now() + make_interval(secs => ${Math.min(seconds ?? defaultS, MAX_BACKOFF_S)}), 1)
    on conflict (host) do update set backoffs = case when ${fresh} then 1 else link_check_hosts.backoffs + 1 end,
      backoff_until = now() + make_interval(secs => least(${MAX_BACKOFF_S},
        coalesce(${seconds ?? null}::int, ${defaultS} * 2 ^ least(case when ${fresh} then 0 else link_check_hosts.backoffs end, 10))))
    returning ceil(extract(epoch from backoff_until - now()))::int as wait`
  return row!.wait
}
