// Link queries. Every write tells other nodes (NOTIFY link_changed, sent at commit) to forget the
// code; the redirect path reads one row by primary key.
import { LINK_CHANNEL } from '../db/channels.js'
import { answerLost } from '../db/errors.js'
import type { Sql, Tx } from '../db/types.js'
import type { StoredVariant } from '../experiments/queries.js'
import type { Rule } from './rules.js'
import { generateCode } from './short-code.js'
import { hostOf } from './hosts.js'
import type { Health, HealthStatus } from './health.js'

const GENERATE_ATTEMPTS = 5

export interface LinkRow {
  code: string
  url: string
  created_at: Date
  updated_at: Date
  visits: number
  last_visited_at: Date | null
  expires_at: Date | null
  /** stopped for a reason not its owner's (live_links.stopped, link_stop_reason): disabled, a blocked host, or suspended by reports */
  disabled: boolean
  starts_at: Date | null
  max_visits: number | null
  /** of the cap: visits still allowed (not below 0); null without a cap */
  visits_left: number | null
  /** it has a password (the hash itself is never read here) */
  password_protected: boolean
  /** as given; compared case-insensitively */
  tags: string[]
  /** the preview card; null: none */
  title: string | null
  description: string | null
  image_url: string | null
  /** redirect rules (rules.ts); null: none */
  rules: Rule[] | null
  /** link_health (undefined where a link was just created: not checked yet) */
  health?: Health
  /** its experiment (experiments/queries.ts); null or absent: none */
  experiment?: LinkExperiment | null
}

/** A link's experiment as a link row carries it. */
export interface LinkExperiment {
  variants: StoredVariant[]
  conversions: boolean
  promote_winner: boolean
}

const columns = (sql: Sql | Tx) =>
  sql`code, url, created_at, updated_at, visits::float8 as visits, last_visited_at, expires_at, stopped as disabled,
      starts_at, max_visits::float8 as max_visits,
      (select greatest(c.visits_left, 0)::float8 from link_caps c where c.code = live_links.code) as visits_left,
      password_hash is not null as password_protected, tags, title, description, image_url, rules, link_health(code) as health,
      (select jsonb_build_object('variants', e.variants, 'conversions', e.conversions, 'promote_winner', e.promote_winner)
       from link_experiments e where e.code = live_links.code) as experiment`

export type CreateResult = LinkRow | 'limit' | 'taken' | 'no-user' | 'blocked' | { retryAfterSeconds: number }

/**
 * The account's allowance of creates: a bucket of `burst` refilled at `perMinute`, both a tenth
 * while the account is younger than `youngHours` (0: never). Only a link created takes one.
 */
export interface CreateAllowance {
  burst: number
  perMinute: number
  youngHours: number
}

/** A url as it is written: as sent, its Location form and its host. */
export interface UrlForms {
  url: string
  location: string
  host: string
}

/**
 * Creates a link in one round trip (create_link): under the owner's row lock, so the cap and
 * the allowance hold under any concurrency. A blocked host is 'blocked', then the cap 'limit',
 * then an empty allowance the seconds to wait; a requested code that exists, live or deleted, is
 * 'taken'; generated ones are tried in turn. Only a link created takes from the allowance.
 */
export async function insertLink(
  sql: Sql | Tx,
  userId: string,
  link: UrlForms & { code?: string; expiresAt: Date | null; startsAt: Date | null; maxVisits: number | null; passwordHash: string | null; tags: string[]; rules: Rule[] } & Card,
  maxLinks: number,
  allowance: CreateAllowance,
): Promise<CreateResult> {
  const codes = link.code !== undefined ? [link.code] : Array.from({ length: GENERATE_ATTEMPTS }, generateCode)
  const [r] = await sql<CreatedRow[]>`
    select * from create_link(${userId}, ${codes}::text[], ${link.url}, ${link.location}, ${link.host}, ${link.expiresAt}, ${maxLinks}, ${LINK_CHANNEL},
                              ${allowance.burst}, ${allowance.perMinute}, ${allowance.youngHours}, ${link.startsAt}, ${link.maxVisits}::bigint, ${link.passwordHash}, ${link.tags}::text[],
                              ${link.title}, ${link.description}, ${link.imageUrl}, ${rulesJson(link.rules)}::text::jsonb, ${ruleHosts(link.rules)}::text[])`
  if (r === undefined) throw answerLost()
  if (r!.r_outcome === 'rate-limited') return { retryAfterSeconds: r!.r_retry_after! }
  if (r!.r_outcome !== 'created') return r!.r_outcome as 'limit' | 'taken' | 'no-user' | 'blocked'
  return {
    code: r!.r_code,
    url: r!.r_url,
    created_at: r!.r_created_at,
    updated_at: r!.r_updated_at,
    visits: r!.r_visits,
    last_visited_at: r!.r_last_visited_at,
    expires_at: r!.r_expires_at,
    disabled: false, // its host was just checked, and no operator has seen it yet
    starts_at: link.startsAt,
    max_visits: link.maxVisits,
    visits_left: link.maxVisits,
    password_protected: link.passwordHash !== null,
    tags: link.tags,
    title: link.title,
    description: link.description,
    image_url: link.imageUrl,
    rules: link.rules.length === 0 ? null : link.rules,
  }
}

/** Rules as the rules column stores them: null for none. */
const rulesJson = (rules: readonly Rule[]): string | null => (rules.length === 0 ? null : JSON.stringify(rules))
/** The hosts of the rules' targets, for the block list. */
const ruleHosts = (rules: readonly Rule[] | undefined): string[] => (rules ?? []).map((r) => hostOf(r.url))

/** A link's preview card; each part may be null. */
export interface Card {
  title: string | null
  description: string | null
  imageUrl: string | null
}

export type BulkOutcome = LinkRow | 'limit' | 'taken' | 'blocked' | 'aborted' | { retryAfterSeconds: number }

/**
 * Creates many links in one round trip (create_links), in order, under the owner's row lock:
 * the cap holds across the batch, and each item created takes one create from the account's
 * allowance. With `atomic`, any failure undoes every insert, the created ones come back
 * 'aborted', and the allowance is not touched.
 */
export async function insertLinks(
  sql: Sql | Tx,
  userId: string,
  links: ReadonlyArray<UrlForms & { code?: string; expiresAt: Date | null }>,
  maxLinks: number,
  atomic: boolean,
  allowance: CreateAllowance,
): Promise<BulkOutcome[] | 'no-user'> {
  const codes = links.flatMap((l) =>
    l.code !== undefined ? [l.code, ...Array<null>(GENERATE_ATTEMPTS - 1).fill(null)] : Array.from({ length: GENERATE_ATTEMPTS }, generateCode))
  const rows = await sql<{ r_outcome: string; r_code: string; r_created_at: Date; r_updated_at: Date; r_retry_after: number | null }[]>`
    select * from create_links(${userId}, ${links.map((l) => l.url)}::text[], ${links.map((l) => l.location)}::text[],
      ${links.map((l) => l.host)}::text[], ${links.map((l) => l.expiresAt?.toISOString() ?? null)}::timestamptz[],
      ${codes}::text[], ${GENERATE_ATTEMPTS}, ${maxLinks}, ${atomic}, ${LINK_CHANNEL}, ${allowance.burst}, ${allowance.perMinute}, ${allowance.youngHours})`
  if (rows[0]?.r_outcome === 'no-user') return 'no-user'
  return rows.map((r, i) =>
    r.r_outcome === 'rate-limited'
      ? { retryAfterSeconds: r.r_retry_after! }
      : r.r_outcome !== 'created'
      ? (r.r_outcome as 'limit' | 'taken' | 'blocked' | 'aborted')
      : {
          code: r.r_code,
          url: links[i]!.url,
          created_at: r.r_created_at,
          updated_at: r.r_updated_at,
          visits: 0,
          last_visited_at: null,
          expires_at: links[i]!.expiresAt,
          disabled: false,
          starts_at: null,
          max_visits: null,
          visits_left: null,
          password_protected: false,
          tags: [],
          title: null,
          description: null,
          image_url: null,
          rules: null,
        })
}

interface CreatedRow {
  r_outcome: string
  r_code: string
  r_url: string
  r_created_at: Date
  r_updated_at: Date
  r_visits: number
  r_last_visited_at: Date | null
  r_expires_at: Date | null
  r_retry_after: number | null
}

/** What a list is narrowed to: a tag (case-insensitive), a substring of the url, the code or the card's title (case-insensitive). */
export interface LinkFilter {
  tag?: string
  q?: string
  /** the status of its health */
  health?: HealthStatus
}

export function listLinks(sql: Sql, userId: string, filter: LinkFilter = {}): Promise<LinkRow[]> {
  const tag = filter.tag ?? null
  const q = filter.q ?? null
  const health = filter.health ?? null
  return sql<LinkRow[]>`
    select ${columns(sql)} from live_links
    where user_id = ${userId}
      and (${tag}::text is null or exists (select 1 from unnest(tags) t where lower(t) = lower(${tag}::text)))
      and (${q}::text is null or strpos(lower(url), lower(${q}::text)) > 0 or strpos(lower(code), lower(${q}::text)) > 0
           or strpos(lower(coalesce(title, '')), lower(${q}::text)) > 0)
      and (${health}::text is null or coalesce((select c.status from link_checks c where c.code = live_links.code), 'unchecked') = ${health}::text)
    order by id desc`
}

/** An owner's tags, each with how many of their links carry it; one spelling per tag (the first in sort order). */
export function listTags(sql: Sql, userId: string): Promise<{ tag: string; links: number }[]> {
  return sql<{ tag: string; links: number }[]>`
    select min(t) as tag, count(distinct l.code)::int as links
    from live_links l, unnest(l.tags) t
    where l.user_id = ${userId}
    group by lower(t)
    order by lower(t)`
}

export async function findLink(sql: Sql, userId: string, code: string): Promise<LinkRow | undefined> {
  const [row] = await sql<LinkRow[]>`
    select ${columns(sql)} from live_links where code = ${code} and user_id = ${userId}`
  return row
}

/** What a PATCH changes: an absent field stays; a null clears it. */
export interface LinkChange {
  url?: UrlForms
  expiresAt?: Date | null
  startsAt?: Date | null
  /** a new cap counts the visits already made: those under the old cap, or all (as flushed) without one */
  maxVisits?: number | null
  /** the new password's hash; null removes the password */
  passwordHash?: string | null
  /** replaces the tags */
  tags?: string[]
  /** each: null clears it */
  title?: string | null
  description?: string | null
  imageUrl?: string | null
  /** replaces the rules ([]: none) */
  rules?: Rule[]
}

/**
 * One statement, so one round trip: the change and the notice to every node commit together.
 * Refused when the link is not the owner's live link ('not-found'), an operator disabled it
 * ('disabled'), or the new url's host is blocked ('blocked'); only then a second read says which.
 */
export async function updateLink(sql: Sql | Tx, userId: string, code: string, change: LinkChange): Promise<LinkRow | 'not-found' | 'disabled' | 'blocked'> {
  const keepExpiry = change.expiresAt === undefined
  const keepStart = change.startsAt === undefined
  const keepCap = change.maxVisits === undefined
  const cap = change.maxVisits ?? null
  const keepPassword = change.passwordHash === undefined
  const keepTags = change.tags === undefined
  const newHost = change.url?.host ?? null
  // updated_at moves forward by at least a millisecond, the precision clients see. The link is
  // not disabled (or nothing changes), so it is stopped only when its host is blocked: a new
  // host was just checked, the old one is as the view says.
  const [row] = await sql<LinkRow[]>`
    with changed as (
      update links l set
        url = coalesce(${change.url?.url ?? null}::text, l.url),
        location = coalesce(${change.url?.location ?? null}::text, l.location),
        host_domains = case when ${newHost}::text is null then l.host_domains else domains_of(${newHost}::text) end,
        expires_at = case when ${keepExpiry}::boolean then l.expires_at else ${change.expiresAt ?? null}::timestamptz end,
        starts_at = case when ${keepStart}::boolean then l.starts_at else ${change.startsAt ?? null}::timestamptz end,
        password_hash = case when ${keepPassword}::boolean then l.password_hash else ${change.passwordHash ?? null}::text end,
        max_visits = case when ${keepCap}::boolean then l.max_visits else ${cap}::bigint end,
        tags = case when ${keepTags}::boolean then l.tags else ${change.tags ?? []}::text[] end,
        title = case when ${change.title === undefined}::boolean then l.title else ${change.title ?? null}::text end,
        description = case when ${change.description === undefined}::boolean then l.description else ${change.description ?? null}::text end,
        image_url = case when ${change.imageUrl === undefined}::boolean then l.image_url else ${change.imageUrl ?? null}::text end,
        rules = case when ${change.rules === undefined}::boolean then l.rules else ${rulesJson(change.rules ?? [])}::text::jsonb end,
        rule_domains = case when ${change.rules === undefined}::boolean then l.rule_domains else rule_domains_of(${ruleHosts(change.rules)}::text[]) end,
        updated_at = greatest(now(), l.updated_at + interval '1 millisecond')
      from live_links old
      where old.code = ${code} and old.user_id = ${userId} and old.disabled_at is null and old.suspended_at is null
        -- the row as locked: a change that committed meanwhile (a delete, a disable) is seen
        and l.code = old.code and l.deleted_at is null and l.disabled_at is null and l.suspended_at is null
        and not (${newHost}::text is not null and host_blocked(${newHost}::text))
        and not exists (select 1 from unnest(${ruleHosts(change.rules)}::text[]) h where host_blocked(h))
      returning l.code, l.url, l.created_at, l.updated_at, l.visits::float8 as visits, l.last_visited_at, l.expires_at,
                -- the new url and rules were just checked; a kept one is as the block list says
                domains_blocked(l.host_domains || l.rule_domains)
                  or exists (select 1 from link_checks c where c.code = l.code and c.status = 'flagged') as disabled,
                l.starts_at, l.max_visits::float8 as max_visits, l.password_hash is not null as password_protected, l.tags,
                l.title, l.description, l.image_url, l.rules, link_health(l.code) as health, old.max_visits as old_max, old.visits as old_visits
    ),
    -- A new cap counts the visits made: under the old cap (the difference is added to what is
    -- left, on the row as it is now), or, without one, the visits as flushed.
    cap_set as (
      insert into link_caps as c (code, visits_left)
      select changed.code, ${cap}::bigint - coalesce(changed.old_max, changed.old_visits) from changed
      where not ${keepCap}::boolean and ${cap}::bigint is not null
      on conflict (code) do update set visits_left = c.visits_left + excluded.visits_left
      returning c.visits_left
    ),
    cap_gone as (
      delete from link_caps c using changed where c.code = changed.code and not ${keepCap}::boolean and ${cap}::bigint is null
    )
    select changed.*,
           case when ${keepCap}::boolean then (select greatest(c.visits_left, 0) from link_caps c where c.code = changed.code)
                else (select greatest(visits_left, 0) from cap_set) end::float8 as visits_left,
           (select jsonb_build_object('variants', e.variants, 'conversions', e.conversions, 'promote_winner', e.promote_winner)
            from link_experiments e where e.code = changed.code) as experiment,
           pg_notify(${LINK_CHANNEL}, changed.code)::text as notified
    from changed`
  if (row !== undefined) {
    const { notified: _, old_max: _m, old_visits: _v, ...link } = row as LinkRow & { notified: unknown; old_max: unknown; old_visits: unknown }
    return link
  }
  const [why] = await sql<{ disabled: boolean }[]>`
    select disabled_at is not null or suspended_at is not null as disabled from live_links where code = ${code} and user_id = ${userId}`
  return why === undefined ? 'not-found' : why.disabled ? 'disabled' : 'blocked'
}

/** Which of these hosts the block list holds (host_blocked), in order: only read after a refusal, to name the field. */
export async function blockedOf(sql: Sql, hosts: string[]): Promise<boolean[]> {
  const rows = await sql<{ blocked: boolean }[]>`select host_blocked(h) as blocked from unnest(${hosts}::text[]) with ordinality as x(h, i) order by i`
  return rows.map((r) => r.blocked)
}

/**
 * Whether the account may create a link now, as create_link will decide, read only: 'limit' at the
 * cap, the seconds to wait when its allowance is empty, else 'ok'. For a create that costs work
 * before its statement (a password's hash): create_link decides again, atomically.
 */
export async function createRoom(sql: Sql, userId: string, maxLinks: number, allowance: CreateAllowance): Promise<'ok' | 'limit' | { retryAfterSeconds: number }> {
  const [row] = await sql<{ n: number; burst: number; per_second: number; level: number }[]>`
    select (select count(*)::int from links l where l.user_id = ${userId} and l.deleted_at is null) as n, a.burst, a.per_second,
           leaky_bucket_level(${`creates account ${userId}`}, a.per_second) as level
    from create_allowance(${userId}::uuid, ${allowance.burst}, ${allowance.perMinute}, ${allowance.youngHours}) a`
  if (row === undefined || row.n >= maxLinks) return row === undefined ? 'ok' : 'limit'
  if (row.level + 1 <= row.burst) return 'ok'
  return { retryAfterSeconds: Math.max(1, Math.ceil((row.level + 1 - row.burst) / row.per_second)) }
}

/** Leaves a tombstone (tombstone_links). */
export async function deleteLink(sql: Sql, userId: string, code: string): Promise<boolean> {
  const rows = await sql`select tombstone_links(${userId}, ${code}, ${LINK_CHANNEL})`
  return rows.length === 1
}

export interface LocationRow {
  code: string
  location: string
  expires_at: Date | null
  starts_at: Date | null
  /** it has a cap (max_visits); exhausted: no visit is left of it */
  capped: boolean
  /** it has a password: the redirect asks for it */
  locked: boolean
  /** the preview card, for link-preview fetchers */
  title: string | null
  description: string | null
  image_url: string | null
  /** redirect rules; null: none */
  rules: Rule[] | null
  /** variants (null: none, or their hosts are blocked: they pause) and whether visits carry click ids */
  variants: StoredVariant[] | null
  conversions: boolean
  exhausted: boolean
  /** the link, its owner or its host is disabled by an operator, or reports suspended it: 410, whatever the expiry */
  disabled: boolean
}

/**
 * The redirect look-up for a batch of codes: primary-key reads of the precomputed Location and
 * the expiry, and whether it is stopped (live_links.stopped, link_stop_reason: the link or its
 * owner disabled, its host blocked, or reports suspended it).
 * Decided here, when a code is loaded, so the cached answer is all a redirect needs; every
 * operator's change tells the nodes to forget what they cached.
 * A capped link is used up when its count is at 0 and no node holds visits of it
 * (sql/0029_cap_holds.sql): while one does, a visit asks the database, which waits for the
 * holders to give back what they did not use (findForVisitor decides it the same way).
 */
export function findLocations(sql: Sql, codes: string[]): Promise<LocationRow[]> {
  return sql<LocationRow[]>`
    select l.code, l.location, l.expires_at, l.starts_at, c.code is not null as capped, l.password_hash is not null as locked, coalesce(c.visits_left <= 0 and not exists (select 1 from link_cap_holds h where h.code = c.code and h.until >= now()), false) as exhausted,
           l.title, l.description, l.image_url, l.rules,
           case when not domains_blocked(coalesce(e.variant_domains, '{}')) then e.variants end as variants, coalesce(e.conversions, false) as conversions,
           l.stopped as disabled
    from live_links l left join link_caps c on c.code = l.code left join link_experiments e on e.code = l.code
    where l.code = any(${codes}::text[])`
}

/** The password hash of a live link, or undefined (no such link, or no password). */
export async function findLinkPassword(sql: Sql, code: string): Promise<string | undefined> {
  const [row] = await sql<{ password_hash: string | null }[]>`select password_hash from links where code = ${code} and deleted_at is null`
  return row?.password_hash ?? undefined
}

/**
 * One statement of the visit caps (caps.ts, sql/0029_cap_holds.sql): per code, back[i] visits given
 * back, need[i] taken for the requests waiting and up to want[i] - need[i] more held by `node`.
 * left: visits_left before the take (null: no cap); others: what other nodes hold.
 */
export async function takeCapVisits(sql: Sql, node: string, codes: string[], back: number[], need: number[], want: number[], leaseMs: number, channel: string):
  Promise<{ code: string; left: number | null; taken: number; others: number }[]> {
  return sql<{ code: string; left: number | null; taken: number; others: number }[]>`
    select r_code as code, r_left as left, r_taken as taken, r_others as others
    from take_cap_visits(${node}, ${codes}::text[], ${back}::int[], ${need}::int[], ${want}::int[], ${leaseMs}::int, ${channel})`
}

/** Why a link does not redirect, as a visitor's page says it: a blocked destination first (the visitor must be warned). */
export type StopReason = 'blocked' | 'disabled' | 'suspended' | 'flagged'

export interface VisitorRow {
  url: string
  expires_at: Date | null
  stopped: StopReason | null
  /** before its start the link is as unknown */
  starts_at: Date | null
  exhausted: boolean
  /** it has a password */
  locked: boolean
}

/** A live link as a visitor may see it (the preview, the page of a stopped link); undefined when there is none. */
export async function findForVisitor(sql: Sql, code: string): Promise<VisitorRow | undefined> {
  const [row] = await sql<VisitorRow[]>`
    select l.url, l.expires_at, l.starts_at, coalesce(c.visits_left <= 0 and not exists (select 1 from link_cap_holds h where h.code = c.code and h.until >= now()), false) as exhausted,
           l.password_hash is not null as locked, l.stop_reason as stopped
    from live_links l left join link_caps c on c.code = l.code
    where l.code = ${code}`
  return row
}
