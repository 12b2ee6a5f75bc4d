// Webhook fields: an https url (http with WEBHOOK_ALLOW_HTTP=on) that does not name a forbidden
// address, the events subscribed to, and whether it is on.
import { isIP } from 'node:net'
import { Fields } from '../http/fields.js'
import { urlProblem } from '../links/validate.js'
import { isForbiddenAddress } from './address.js'

export const EVENTS = ['link.created', 'link.updated', 'link.deleted', 'link.expired', 'link.disabled', 'link.enabled', 'link.clicked', 'link.unhealthy', 'link.healthy'] as const
const URL_RULE = { min: 1, max: 2048, unit: 'bytes' } as const

export interface WebhookRules {
  allowHttp: boolean
  allowPrivate: boolean
}

export interface WebhookInput {
  url?: string
  events?: string[]
  enabled?: boolean
}

/** A create needs url and events; a change any of url, events and enabled. */
export function parseWebhook(body: Record<string, unknown>, rules: WebhookRules, create: boolean): WebhookInput {
  const f = new Fields(body)
  const out: WebhookInput = {}
  const url = create ? f.string('url', URL_RULE) : f.optionalString('url', URL_RULE)
  if (url !== undefined) {
    const problem = urlProblem(url) ?? schemeProblem(url, rules) ?? addressProblem(url, rules)
    if (problem === undefined) out.url = url
    else f.fail('url', 'INVALID', problem)
  }
  if (f.has('events')) {
    const events = body.events
    if (!Array.isArray(events) || !events.every((e) => typeof e === 'string')) f.fail('events', 'TYPE', 'must be an array of strings')
    else if (events.length === 0) f.fail('events', 'TOO_SHORT', 'must name at least one event')
    else if (!events.every((e) => (EVENTS as readonly string[]).includes(e))) f.fail('events', 'INVALID', `may contain only ${EVENTS.join(', ')}`)
    else out.events = [...new Set(events as string[])]
  } else if (create) f.fail('events', 'REQUIRED', 'is required')
  if (!create && f.has('enabled')) {
    if (typeof body.enabled !== 'boolean') f.fail('enabled', 'TYPE', 'must be a boolean')
    else out.enabled = body.enabled
  }
  f.check()
  return out
}

function schemeProblem(url: string, rules: WebhookRules): string | undefined {
  if (url.toLowerCase().startsWith('https://')) return undefined
  return rules.allowHttp ? undefined : 'must be an https URL'
}

/** A literal address can be judged now; a name is judged each time it is resolved. */
function addressProblem(url: string, rules: WebhookRules): string | undefined {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
  if (rules.allowPrivate || isIP(host) === 0 || !isForbiddenAddress(host)) return undefined
  return 'must not point at a loopback, private, link-local or this machine\'s address'
}
