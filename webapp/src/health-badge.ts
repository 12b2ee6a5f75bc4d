// A link's health as a badge (the list, the link page) and the words of the health filter.
import type { Health } from './api.js'
import { h } from './dom.js'
import { when } from './format.js'

export const HEALTH_LABELS: Record<Health['status'], string> = {
  ok: 'Reachable',
  broken: 'Broken',
  unreachable: 'Unreachable',
  flagged: 'Flagged',
  unchecked: 'Not checked yet',
}

export const healthBadge = (health: Health): HTMLElement =>
  h('span', { class: `badge health-${health.status}`, title: health.detail ?? '' }, HEALTH_LABELS[health.status])

/** The badge, why, and when it was checked. */
export const healthLine = (health: Health): HTMLElement =>
  h(
    'span',
    {},
    healthBadge(health),
    health.detail === null ? null : h('span', { class: 'health-detail' }, ` ${health.detail}`),
    health.checked_at === null ? null : h('span', { class: 'muted' }, ` (checked ${when(health.checked_at)})`),
  )
