// A link's `health`: what the last decided check of its destination found (src/link-checks/,
// sql/0026 link_health), as every link representation shows it.
export const HEALTH_STATUSES = ['ok', 'broken', 'unreachable', 'flagged', 'unchecked'] as const
export type HealthStatus = (typeof HEALTH_STATUSES)[number]

export interface Health {
  status: HealthStatus
  checked_at: string | null
  http_status: number | null
  final_url: string | null
  detail: string | null
}

/** A link not checked yet (a new one: its first check is queued). */
export const UNCHECKED: Health = Object.freeze({ status: 'unchecked', checked_at: null, http_status: null, final_url: null, detail: null })

/** link_health's JSON with checked_at as the API writes times (toISOString). */
export function presentHealth(raw: Health | null | undefined): Health {
  if (raw === null || raw === undefined) return UNCHECKED
  return { ...raw, checked_at: raw.checked_at === null ? null : new Date(raw.checked_at).toISOString() }
}
