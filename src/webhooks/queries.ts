// Webhook SQL: the owner's endpoints, the outbox (claim, record an attempt, retry), and the jobs
// that queue link.expired and drop old deliveries. Events of link changes are queued by triggers
// (link_webhook_events, queue_webhook_event), in the transaction of the change.
import { atomically } from '../db/atomic.js'
import type { Sql, Tx } from '../db/types.js'

export const MAX_WEBHOOKS_PER_ACCOUNT = 5
/** Failing this long, an endpoint is turned off. */
export const DISABLE_AFTER_DAYS = 5
/** An attempt's longest: the request's 10 s (send.ts), then recording it within the database's 5 s, with a margin. */
export const ATTEMPT_SECONDS = 16
/** Longer than an attempt may take: past it, the sender is taken for dead and another node may send. */
export const LEASE_SECONDS = 20

export interface WebhookRow {
  id: string
  url: string
  events: string[]
  enabled: boolean
  disabled_reason: string | null
  created_at: Date
  updated_at: Date
}

const columns = (sql: Sql | Tx) => sql`id, url, events, enabled, disabled_reason, created_at, updated_at`

/** Under the owner's row lock, so the cap holds under any concurrency. */
export function createWebhook(sql: Sql | Tx, userId: string, w: { url: string; events: string[]; secret: string }): Promise<WebhookRow | 'limit' | 'no-user'> {
  return atomically(sql, async (tx) => {
    const [user] = await tx`select 1 from users where id = ${userId} for update`
    if (user === undefined) return 'no-user' as const
    const [row] = await tx<WebhookRow[]>`
      insert into webhooks (user_id, url, events, secret)
      select ${userId}, ${w.url}, ${w.events}::text[], ${w.secret}
      where (select count(*) from webhooks where user_id = ${userId}) < ${MAX_WEBHOOKS_PER_ACCOUNT}
      returning ${columns(tx)}`
    return row ?? ('limit' as const)
  })
}

export function listWebhooks(sql: Sql, userId: string): Promise<WebhookRow[]> {
  return sql<WebhookRow[]>`select ${columns(sql)} from webhooks where user_id = ${userId} order by created_at, id`
}

export async function findWebhook(sql: Sql, userId: string, id: string): Promise<WebhookRow | undefined> {
  const [row] = await sql<WebhookRow[]>`select ${columns(sql)} from webhooks where id = ${id} and user_id = ${userId}`
  return row
}

/** An absent field stays. Turning an endpoint on clears why it was off, and its failing streak. */
export async function updateWebhook(sql: Sql, userId: string, id: string, change: { url?: string; events?: string[]; enabled?: boolean }): Promise<WebhookRow | undefined> {
  const [row] = await sql<WebhookRow[]>`
    update webhooks set
      url = coalesce(${change.url ?? null}::text, url),
      events = coalesce(${change.events ?? null}::text[], events),
      enabled = coalesce(${change.enabled ?? null}::boolean, enabled),
      disabled_reason = case when ${change.enabled ?? null}::boolean is not null then null else disabled_reason end,
      failing_since = case when ${change.enabled === true} then null else failing_since end,
      updated_at = now()
    where id = ${id} and user_id = ${userId}
    returning ${columns(sql)}`
  return row
}

export async function deleteWebhook(sql: Sql, userId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from webhooks where id = ${id} and user_id = ${userId} returning id`
  return rows.length === 1
}

export interface DeliveryRow {
  id: string
  event: string
  created_at: Date
  state: 'pending' | 'delivered' | 'failed'
  next_attempt_at: Date
  attempts: Array<{ attempted_at: string; status_code: number | null; error: string | null; duration_ms: number }>
}

const deliveryColumns = (sql: Sql | Tx) => sql`
  d.id, d.event, d.created_at, d.state, d.next_attempt_at,
  coalesce((select jsonb_agg(jsonb_build_object('attempted_at', a.attempted_at, 'status_code', a.status_code,
                                                'error', a.error, 'duration_ms', a.duration_ms) order by a.id)
            from webhook_attempts a where a.delivery_id = d.id), '[]'::jsonb) as attempts`

/** A webhook.test event for this endpoint (whatever it subscribes to); undefined if not the owner's. */
export async function queueTest(sql: Sql | Tx, userId: string, id: string): Promise<DeliveryRow | undefined> {
  const [row] = await sql<DeliveryRow[]>`
    with d as (
      insert into webhook_deliveries (webhook_id, event, data)
      select w.id, 'webhook.test', jsonb_build_object('webhook_id', w.id) from webhooks w
      where w.id = ${id} and w.user_id = ${userId}
      returning *)
    select d.id, d.event, d.created_at, d.state, d.next_attempt_at, '[]'::jsonb as attempts from d`
  return row
}

export const MAX_DELIVERIES_LISTED = 100

/** The newest deliveries of the owner's endpoint, each with its attempts; undefined if not the owner's. */
export async function listDeliveries(sql: Sql, userId: string, id: string): Promise<DeliveryRow[] | undefined> {
  const rows = await sql<(DeliveryRow & { mine: boolean })[]>`
    select ${deliveryColumns(sql)}, true as mine
    from webhooks w left join lateral (
      select * from webhook_deliveries x where x.webhook_id = w.id order by x.created_at desc, x.id limit ${MAX_DELIVERIES_LISTED}
    ) d on true
    where w.id = ${id} and w.user_id = ${userId}`
  if (rows.length === 0) return undefined
  return rows.filter((r) => r.id !== null).map(({ mine: _, ...d }) => d)
}

/** Sends the delivery again now, its retries starting over; undefined if it is not the owner's endpoint's. */
export async function retryDelivery(sql: Sql | Tx, userId: string, id: string, deliveryId: string): Promise<DeliveryRow | undefined> {
  const [row] = await sql<DeliveryRow[]>`
    with d as (
      update webhook_deliveries x set state = 'pending', attempts = 0, next_attempt_at = now(), leased_until = null
      from webhooks w
      where x.id = ${deliveryId} and x.webhook_id = ${id} and w.id = x.webhook_id and w.user_id = ${userId}
      returning x.*)
    select ${deliveryColumns(sql)} from d`
  return row
}

export interface Claimed {
  id: string
  event: string
  data: Record<string, unknown>
  created_at: Date
  /** this attempt's number, from 1 */
  attempts: number
  webhook_id: string
  /** the endpoint's owner */
  user_id: string
  url: string
  secret: string
}

/** Endpoints and owners a claim passes over: this node could not start their deliveries now. */
export interface ClaimSkips {
  webhooks: readonly string[]
  accounts: readonly string[]
}

/**
 * Takes up to `limit` due deliveries of enabled endpoints for this node: SKIP LOCKED, so nodes
 * claiming at the same time take different rows, and a lease, so no other node sends them
 * until it runs out. Passes over the endpoints and accounts in `skip` (the deliverer's fair
 * share: a stalled endpoint's backlog does not fill a claim that others' deliveries wait behind).
 */
export function claimDue(sql: Sql, limit: number, skip: ClaimSkips = { webhooks: [], accounts: [] }): Promise<Claimed[]> {
  return sql<Claimed[]>`
    with due as (
      select d.id from webhook_deliveries d join webhooks w on w.id = d.webhook_id and w.enabled
      where d.state = 'pending' and d.next_attempt_at <= now() and (d.leased_until is null or d.leased_until < now())
        and not (d.webhook_id = any(${skip.webhooks}::uuid[])) and not (w.user_id = any(${skip.accounts}::uuid[]))
      order by d.next_attempt_at
      limit ${limit}
      for update of d skip locked)
    update webhook_deliveries d set leased_until = now() + make_interval(secs => ${LEASE_SECONDS}), attempts = d.attempts + 1
    from due, webhooks w
    where d.id = due.id and w.id = d.webhook_id
    returning d.id, d.event, d.data, d.created_at, d.attempts, w.id as webhook_id, w.user_id::text as user_id, w.url, w.secret`
}

/**
 * Gives back claims this node did not attempt (stopping, or a queue that fell behind its leases):
 * due again at once for any node, and the claim not counted as an attempt. Only a claim that is
 * still the current one is given back.
 */
export async function releaseClaims(sql: Sql, claims: readonly Claimed[]): Promise<void> {
  if (claims.length === 0) return
  await sql`
    update webhook_deliveries d set leased_until = null, attempts = d.attempts - 1
    from unnest(${claims.map((c) => c.id)}::uuid[], ${claims.map((c) => c.attempts)}::int[]) as c(id, attempts)
    where d.id = c.id and d.attempts = c.attempts and d.state = 'pending'`
}

/** An attempt's outcome, to record. */
export interface Attempt {
  claim: Claimed
  ok: boolean
  status: number | null
  error: string | null
  durationMs: number
  /** seconds until the next try; null: the schedule has run out */
  retryInSeconds: number | null
}

/**
 * Many attempts' outcomes, in one statement (a node records what finished together at once, not
 * a statement per request): each attempt's row; each delivery done, due again after its
 * retryInSeconds, or failed when that is null; and each endpoint's failing streak (ended by any
 * success among them), which turns it off after DISABLE_AFTER_DAYS. An endpoint whose streak
 * does not change is not written. Only the claim that made an attempt may record it.
 */
export async function recordAttempts(sql: Sql, attempts: readonly Attempt[]): Promise<void> {
  if (attempts.length === 0) return
  const col = <T>(f: (a: Attempt) => T) => attempts.map(f)
  await sql`
    with o as (
      select * from unnest(${col((a) => a.claim.id)}::uuid[], ${col((a) => a.claim.attempts)}::int[], ${col((a) => String(a.ok))}::text[]::boolean[],
                           ${col((a) => a.status)}::int[], ${col((a) => a.error)}::text[], ${col((a) => a.durationMs)}::int[],
                           ${col((a) => a.retryInSeconds)}::int[])
        as o(id, attempts, ok, status, error, duration_ms, retry_in)
    ), mine as (
      select o.*, d.webhook_id from o join webhook_deliveries d on d.id = o.id and d.attempts = o.attempts
    ), attempt as (
      insert into webhook_attempts (delivery_id, status_code, error, duration_ms)
      select id, status, error, duration_ms from mine
    ), delivery as (
      update webhook_deliveries d
      set state = case when mine.ok then 'delivered' when mine.retry_in is null then 'failed' else 'pending' end,
          leased_until = null, next_attempt_at = now() + make_interval(secs => coalesce(mine.retry_in, 0))
      from mine where d.id = mine.id
    ), hooks as (
      select webhook_id, bool_or(ok) as ok from mine group by webhook_id
    )
    update webhooks w set
      failing_since = case when h.ok then null else coalesce(w.failing_since, now()) end,
      enabled = w.enabled and (h.ok or coalesce(w.failing_since, now()) > now() - make_interval(days => ${DISABLE_AFTER_DAYS})),
      disabled_reason = case
        when not h.ok and w.enabled and coalesce(w.failing_since, now()) <= now() - make_interval(days => ${DISABLE_AFTER_DAYS})
        then 'every delivery failed for ' || ${DISABLE_AFTER_DAYS} || ' days, since ' || to_char(w.failing_since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
        else w.disabled_reason end
    from hooks h
    where w.id = h.webhook_id and (not h.ok or w.failing_since is not null)`
}

/**
 * Queues link.expired for every expiry that passed and was not announced yet (each once), with the
 * payload of every link event (link_event_data). The join reads each link as it was before this
 * statement's update, which changes only expiry_announced, a column no payload shows.
 */
export async function announceExpired(sql: Sql): Promise<void> {
  await sql`
    with due as (
      update links l set expiry_announced = l.expires_at
      where l.expires_at <= now() and l.deleted_at is null and l.expiry_announced is distinct from l.expires_at
      returning l.code)
    select queue_webhook_event(l.user_id, 'link.expired', link_event_data(l))::text
    from due join links l on l.code = due.code`
}

/** Whether any account has a webhook: without one, a node has nothing to deliver and needs no delivery thread. */
export async function anyWebhooks(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ any: boolean }[]>`select exists (select 1 from webhooks) as any`
  return row?.any === true
}

/** Deliveries (with their attempts) older than the retention. */
export async function deleteOldDeliveries(sql: Sql, retentionDays: number): Promise<void> {
  await sql`delete from webhook_deliveries where created_at < now() - make_interval(days => ${retentionDays})`
}
