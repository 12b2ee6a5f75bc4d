// The one API client: every response becomes data or an ApiError that carries the contract's
// code, the field errors by field, and Retry-After. Only the public API, same origin, no cookies.
import { t } from './i18n.js'
import { token } from './session.js'

export interface User {
  id: string
  username: string
  display_name: string
  created_at: string
}

export interface Login {
  token: string
  created_at: string
  expires_at: string
}

export interface Link {
  code: string
  url: string
  short_url: string
  created_at: string
  updated_at: string
  visits: number
  last_visited_at: string | null
  expires_at: string | null
  /** an operator stopped it (the link, its owner's account or its target's host): it answers 410 */
  disabled: boolean
  /** before it the link answers as unknown */
  starts_at: string | null
  max_visits: number | null
  /** redirects the cap still allows; null without a cap */
  visits_left: number | null
  password_protected: boolean
  tags: string[]
  /** the preview card that chat apps and social sites show */
  title: string | null
  description: string | null
  image_url: string | null
  /** what the last check of its destination found */
  health: Health
  /** a split test's destinations; [] for none */
  variants: Array<{ url: string; weight: number }>
  /** redirects carry a click id (ls_cid) for conversions */
  conversions: boolean
  /** a clear winner becomes the url */
  promote_winner: boolean
}

export const HEALTH_STATUSES = ['ok', 'broken', 'unreachable', 'flagged', 'unchecked'] as const
export interface Health {
  status: (typeof HEALTH_STATUSES)[number]
  checked_at: string | null
  http_status: number | null
  final_url: string | null
  detail: string | null
}

/** One of the caller's tags, with how many links carry it. */
export interface Tag {
  tag: string
  links: number
}

export interface Day {
  date: string
  visits: number
  humans: number
  bots: number
  uniques: number
  /** the day's human visits by value; values without visits are absent */
  devices: Record<string, number>
  browsers: Record<string, number>
  os: Record<string, number>
  countries: Record<string, number>
}

/** Human visits over the range by value, most first. */
export type Breakdown = Array<{ name: string; visits: number }>

export interface Stats {
  code: string
  from: string
  to: string
  total: number
  humans: number
  bots: number
  days: Day[]
  referrers: Array<{ host: string; visits: number }>
  devices: Breakdown
  browsers: Breakdown
  os: Breakdown
  countries: Breakdown
  variants: Array<{ url: string; weight: number; visits: number; uniques: number; conversions: number }>
  experiment: { winner: number | null; p_value: number | null; confident: boolean }
}

export interface Session {
  id: string
  created_at: string
  expires_at: string
  last_used_at: string
  current: boolean
}

export const EVENTS = ['link.created', 'link.updated', 'link.deleted', 'link.expired', 'link.disabled', 'link.enabled', 'link.clicked', 'link.unhealthy', 'link.healthy'] as const

export interface Webhook {
  id: string
  url: string
  events: string[]
  enabled: boolean
  /** why the service turned it off (failing for days); null otherwise */
  disabled_reason: string | null
  created_at: string
  updated_at: string
  /** only in the answer to its creation */
  secret?: string
}

export interface Delivery {
  id: string
  event: string
  created_at: string
  state: 'pending' | 'delivered' | 'failed'
  next_attempt_at: string | null
  attempts: Array<{ attempted_at: string; status_code: number | null; error: string | null; duration_ms: number }>
}

/** The API's error body, as a bulk create's item carries it. */
export interface ErrorBody {
  code: string
  message: string
  errors?: Array<{ field: string; message: string }>
}

export type BulkResult = { status: 201; link: Link } | { status: number; error: ErrorBody; retry_after?: number }

/**
 * What people read for each code the API can answer (a catalogue key); the API's own message
 * otherwise, in English like every message of the API (the codes are the contract).
 */
const MESSAGES: Record<string, string> = {
  INVALID_CREDENTIALS: 'error.invalidCredentials',
  UNAUTHORIZED: 'error.unauthorized',
  USERNAME_TAKEN: 'error.usernameTaken',
  CODE_TAKEN: 'error.codeTaken',
  LINK_LIMIT_EXCEEDED: 'error.linkLimit',
  WEBHOOK_LIMIT_EXCEEDED: 'error.webhookLimit',
  LINK_NOT_FOUND: 'error.linkNotFound',
  LINK_DISABLED: 'error.linkDisabled',
  URL_BLOCKED: 'error.urlBlocked',
  ACCOUNT_DISABLED: 'error.accountDisabled',
  SESSION_NOT_FOUND: 'error.sessionNotFound',
  CURRENT_PASSWORD_INCORRECT: 'error.currentPassword',
  REQUEST_BODY_TOO_LARGE: 'error.tooLarge',
  SERVICE_UNAVAILABLE: 'error.unavailable',
  INTERNAL_ERROR: 'error.internal',
  NETWORK: 'error.network',
}

const ours = (code: string): string | undefined => (MESSAGES[code] === undefined ? undefined : t(MESSAGES[code]!))

/** Errors about one field of a form, though the API reports them on the whole request. */
const FIELD_OF: Record<string, string> = {
  USERNAME_TAKEN: 'username',
  CODE_TAKEN: 'code',
  URL_BLOCKED: 'url',
  CURRENT_PASSWORD_INCORRECT: 'current_password',
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** field → message, from the 422's `errors` (and the codes in FIELD_OF) */
    readonly fields: Record<string, string>,
    /** seconds, from Retry-After (429, 503); 0 when absent */
    readonly retryAfter: number,
    readonly requestId: string | null,
  ) {
    super(message)
  }
}

let unauthorized: () => void = () => {}
/** What to do when the API no longer accepts the token (main.ts: back to sign-in, keeping the place). */
export function whenUnauthorized(fn: () => void): void {
  unauthorized = fn
}

const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1) + (/[.!?]$/.test(s) ? '' : '.')

/** One sentence for an error body: ours for a known code, else its first field's message, else its own. */
export function describe(e: ErrorBody): string {
  const field = e.errors?.[0]
  return ours(e.code) ?? (field === undefined ? sentence(e.message) : t('error.field', { field: field.field === 'url' ? t('field.url') : field.field, message: sentence(field.message) }))
}

async function send(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = {}
  const bearer = token()
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  let res: Response
  try {
    res = await fetch(`/api/v1${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    })
  } catch {
    throw new ApiError(0, 'NETWORK', ours('NETWORK')!, {}, 0, null)
  }
  if (res.ok) return res
  let data: { code?: string; message?: string; errors?: Array<{ field: string; message: string }> } = {}
  try {
    data = await res.json()
  } catch {
    // a proxy's HTML error page: the status says enough
  }
  const code = data.code ?? `HTTP_${res.status}`
  const fields: Record<string, string> = {}
  for (const e of data.errors ?? []) fields[e.field] ??= sentence(e.message)
  const message = ours(code) ?? (data.message === undefined ? t('error.status', { status: String(res.status) }) : sentence(data.message))
  if (FIELD_OF[code] !== undefined) fields[FIELD_OF[code]!] = message
  const err = new ApiError(res.status, code, message, fields, Number(res.headers.get('retry-after') ?? 0) || 0, res.headers.get('x-request-id'))
  if (code === 'UNAUTHORIZED' && bearer !== null) unauthorized()
  throw err
}

export const get = async <T>(path: string): Promise<T> => (await send('GET', path)).json() as Promise<T>
export const post = async <T>(path: string, body?: unknown): Promise<T> => (await send('POST', path, body)).json() as Promise<T>
export const patch = async <T>(path: string, body: unknown): Promise<T> => (await send('PATCH', path, body)).json() as Promise<T>
/** For 204 answers. */
export const act = async (method: 'POST' | 'DELETE', path: string): Promise<void> => void (await send(method, path))
export const blob = async (path: string): Promise<Blob> => (await send('GET', path)).blob()
