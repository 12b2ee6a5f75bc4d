// /api/v1/webhooks: an owner's endpoints, their deliveries, a test event and a retry.
import { sessionOf, type Ctx } from '../context.js'
import { deliveryNotFound, unauthorized, webhookLimitExceeded, webhookNotFound } from '../http/errors.js'
import { takeOrRefuse } from '../ratelimit/leaky.js'
import { json, noContent, type Reply } from '../http/reply.js'
import {
  createWebhook, deleteWebhook, findWebhook, listDeliveries, listWebhooks, MAX_WEBHOOKS_PER_ACCOUNT, queueTest, retryDelivery, updateWebhook,
  type DeliveryRow, type WebhookRow,
} from './queries.js'
import { newSecret } from './signature.js'
import { parseWebhook } from './validate.js'

type WebhooksCtx = Ctx<'sql' | 'config' | 'buckets'>

// A test event or a retry queues a delivery on demand: ten at once per account, then ten a minute,
// so one account cannot fill the delivery queue that every account shares.
const SENDS_ON_DEMAND = { limit: 10, drainPerSecond: 10 / 60 }

/** Takes one test or retry from the account's allowance, or 429 with Retry-After. */
const takeSendOnDemand = (ctx: WebhooksCtx, userId: string) => takeOrRefuse(ctx.deps.buckets, `webhook-sends account ${userId}`, SENDS_ON_DEMAND)

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A malformed id is simply not found, and never reaches the database. */
function webhookId(param: string): string {
  if (!UUID.test(param)) throw webhookNotFound()
  return param
}

const present = (w: WebhookRow) => ({
  id: w.id,
  url: w.url,
  events: w.events,
  enabled: w.enabled,
  disabled_reason: w.disabled_reason,
  created_at: w.created_at.toISOString(),
  updated_at: w.updated_at.toISOString(),
})

const presentDelivery = (d: DeliveryRow) => ({
  id: d.id,
  event: d.event,
  created_at: d.created_at.toISOString(),
  state: d.state,
  next_attempt_at: d.state === 'pending' ? d.next_attempt_at.toISOString() : null,
  attempts: d.attempts.map((a) => ({ ...a, attempted_at: new Date(a.attempted_at).toISOString() })),
})

const rules = (ctx: WebhooksCtx) => ctx.deps.config.webhooks

export async function postWebhook(ctx: WebhooksCtx): Promise<Reply> {
  const input = parseWebhook(ctx.body, rules(ctx), true)
  const secret = newSecret()
  const row = await ctx.effect((sql) => createWebhook(sql, sessionOf(ctx).userId, { url: input.url!, events: input.events!, secret }))
  if (row === 'no-user') throw unauthorized()
  if (row === 'limit') throw webhookLimitExceeded(MAX_WEBHOOKS_PER_ACCOUNT)
  // The secret is shown this once; it is never listed again.
  return json(201, { ...present(row), secret }, { location: `/api/v1/webhooks/${row.id}` })
}

export async function getWebhooks(ctx: WebhooksCtx): Promise<Reply> {
  return json(200, { webhooks: (await listWebhooks(ctx.deps.sql, sessionOf(ctx).userId)).map(present) })
}

export async function getWebhook(ctx: WebhooksCtx): Promise<Reply> {
  const row = await findWebhook(ctx.deps.sql, sessionOf(ctx).userId, webhookId(ctx.param))
  if (row === undefined) throw webhookNotFound()
  return json(200, present(row))
}

export async function patchWebhook(ctx: WebhooksCtx): Promise<Reply> {
  const change = parseWebhook(ctx.body, rules(ctx), false) // field validation comes before the look-up (contract §2)
  const row = await updateWebhook(ctx.deps.sql, sessionOf(ctx).userId, webhookId(ctx.param), change)
  if (row === undefined) throw webhookNotFound()
  return json(200, present(row))
}

export async function removeWebhook(ctx: WebhooksCtx): Promise<Reply> {
  if (!(await deleteWebhook(ctx.deps.sql, sessionOf(ctx).userId, webhookId(ctx.param)))) throw webhookNotFound()
  return noContent()
}

export async function testWebhook(ctx: WebhooksCtx): Promise<Reply> {
  const id = webhookId(ctx.param)
  await takeSendOnDemand(ctx, sessionOf(ctx).userId)
  const delivery = await ctx.effect((sql) => queueTest(sql, sessionOf(ctx).userId, id))
  if (delivery === undefined) throw webhookNotFound()
  return json(202, presentDelivery(delivery))
}

export async function getDeliveries(ctx: WebhooksCtx): Promise<Reply> {
  const deliveries = await listDeliveries(ctx.deps.sql, sessionOf(ctx).userId, webhookId(ctx.param))
  if (deliveries === undefined) throw webhookNotFound()
  return json(200, { deliveries: deliveries.map(presentDelivery) })
}

/** The route's two parameters arrive as "{id}/{delivery_id}". */
export async function postRetry(ctx: WebhooksCtx): Promise<Reply> {
  const [id = '', deliveryId = ''] = ctx.param.split('/')
  const userId = sessionOf(ctx).userId
  const hook = webhookId(id)
  if (!UUID.test(deliveryId)) {
    if ((await findWebhook(ctx.deps.sql, userId, hook)) === undefined) throw webhookNotFound()
    throw deliveryNotFound()
  }
  await takeSendOnDemand(ctx, userId)
  const delivery = await ctx.effect((sql) => retryDelivery(sql, userId, hook, deliveryId))
  if (delivery === undefined) {
    if ((await findWebhook(ctx.deps.sql, userId, hook)) === undefined) throw webhookNotFound()
    throw deliveryNotFound()
  }
  return json(202, presentDelivery(delivery))
}
