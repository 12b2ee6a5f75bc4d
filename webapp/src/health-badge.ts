// A link's health as a badge (the list, the link page) and the words of the health filter.
import type { Health } from './api.js'
import { h } from './dom.js'
import { when } from './format.js'
import { t } from './i18n.js'

const HEALTH_KEYS: Record<Health['status'], string> = {
  ok: 'health.ok',
  broken: 'health.broken',
  unreachable: 'health.unreachable',
  flagged: 'health.flagged',
  unchecked: 'health.unchecked',
}

export const healthLabel = (status: Health['status']): string => t(HEALTH_KEYS[status])

export const healthBadge = (health: Health): HTMLElement =>
  h('span', { class: `badge health-${health.status}`, title: health.detail ?? '' }, healthLabel(health.status))

/** The badge, why (the check's own words, in English like the API's messages), and when it was checked. */
export const healthLine = (health: Health): HTMLElement =>
  h(
    'span',
    {},
    healthBadge(health),
    health.detail === null ? null : h('span', { class: 'health-detail', lang: 'en', dir: 'ltr' }, ` ${health.detail}`),
    health.checked_at === null ? null : h('span', { class: 'muted' }, ` ${t('health.checked', { when: when(health.checked_at) })}`),
  )
