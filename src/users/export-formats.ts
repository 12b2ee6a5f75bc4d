// A person's export in its two forms, each an async sequence of chunks the reply sends as the
// client takes them: one JSON document, or CSV files in a ZIP. Both read the same pieces
// (export-data.ts) in the same order; at most one link's statistics are in memory at a time.
import type { Sql } from '../db/types.js'
import { csvCell, type Cell } from '../http/csv.js'
import { zip, type ZipEntry } from '../http/zip.js'
import { presentLink } from '../links/routes.js'
import type { LinkRow } from '../links/queries.js'
import {
  exportDeliveries,
  exportLinks,
  exportSessions,
  exportWebhooks,
  linkBreakdowns,
  linkDays,
  linkReferrers,
  linkStatistics,
  type ExportAccount,
  type LinkStatistics,
} from './export-data.js'

export const EXPORT_FORMAT = 'link-service-account-export'
export const EXPORT_VERSION = 1

export interface ExportRequest {
  sql: Sql
  account: ExportAccount
  baseUrl: string
  /** the statistics' kept days, "YYYY-MM-DD", inclusive */
  from: string
  to: string
  now: Date
}

const iso = (d: Date | null): string | null => d?.toISOString() ?? null

const presentAccount = (a: ExportAccount) => ({
  id: a.id,
  username: a.username,
  display_name: a.display_name,
  created_at: a.created_at.toISOString(),
  updated_at: a.updated_at.toISOString(),
  disabled: a.disabled,
})

/** A link as the API shows it, and whether it has a password: "set", never what it is. */
const presentExportLink = (baseUrl: string, link: LinkRow) => ({ ...presentLink(baseUrl, link), password: link.password_protected ? 'set' : null })

const BREAKDOWN_KEYS = { device: 'devices', browser: 'browsers', os: 'os', country: 'countries' } as const

/** Each day with its referrers and breakdowns, oldest first. */
function daysOf(stats: LinkStatistics) {
  type Day = { day: string; humans: number; bots: number; uniques: number; referrers: Array<{ host: string; visits: number }> } & Record<
    (typeof BREAKDOWN_KEYS)[keyof typeof BREAKDOWN_KEYS],
    Array<{ name: string; visits: number }>
  >
  const byDay = new Map<string, Day>()
  const dayOf = (day: string): Day => {
    let d = byDay.get(day)
    if (d === undefined) byDay.set(day, (d = { day, humans: 0, bots: 0, uniques: 0, referrers: [], devices: [], browsers: [], os: [], countries: [] }))
    return d
  }
  for (const d of stats.days) Object.assign(dayOf(d.day), { humans: d.humans, bots: d.bots, uniques: d.uniques })
  for (const r of stats.referrers) dayOf(r.day).referrers.push({ host: r.host, visits: r.visits })
  for (const m of stats.breakdowns) dayOf(m.day)[BREAKDOWN_KEYS[m.dim]].push({ name: m.value, visits: m.visits })
  return [...byDay.values()].sort((a, b) => (a.day < b.day ? -1 : 1))
}

/** Days written per chunk of a link's statistics. */
const DAYS_PER_CHUNK = 32

export async function* exportJson(r: ExportRequest): AsyncGenerator<string> {
  const { sql, account, baseUrl } = r
  const head = { format: EXPORT_FORMAT, version: EXPORT_VERSION, exported_at: r.now.toISOString(), account: presentAccount(account) }
  yield `${JSON.stringify(head).slice(0, -1)},"links":[`
  const links = await exportLinks(sql, account.id)
  for (const [i, link] of links.entries()) {
    // The link's object without its closing brace, then its days a few at a time.
    yield `${i === 0 ? '' : ','}${JSON.stringify(presentExportLink(baseUrl, link)).slice(0, -1)},"statistics":[`
    const days = daysOf(await linkStatistics(sql, account.id, link.code, r.from, r.to))
    for (let at = 0; at < days.length; at += DAYS_PER_CHUNK) {
      yield (at === 0 ? '' : ',') + days.slice(at, at + DAYS_PER_CHUNK).map((d) => JSON.stringify(d)).join(',')
    }
    yield ']}'
  }
  const sessions = (await exportSessions(sql, account.id)).map((s) => ({
    id: s.id,
    created_at: s.created_at.toISOString(),
    expires_at: s.expires_at.toISOString(),
    last_used_at: s.last_used_at.toISOString(),
  }))
  yield `],"sessions":${JSON.stringify(sessions)},"webhooks":[`
  for (const [i, w] of (await exportWebhooks(sql, account.id)).entries()) {
    const hook = { ...w, failing_since: iso(w.failing_since), created_at: w.created_at.toISOString(), updated_at: w.updated_at.toISOString() }
    yield `${i === 0 ? '' : ','}${JSON.stringify(hook).slice(0, -1)},"deliveries":[`
    let first = true
    for await (const page of exportDeliveries(sql, account.id, w.id)) {
      const text = page.map((d) => JSON.stringify({ ...d, created_at: d.created_at.toISOString(), next_attempt_at: d.next_attempt_at.toISOString() })).join(',')
      yield (first ? '' : ',') + text
      first = false
    }
    yield ']}'
  }
  yield ']}\n'
}

const line = (cells: readonly Cell[]): string => cells.map(csvCell).join(',') + '\r\n'
const bool = (b: boolean): string => (b ? 'true' : 'false')

/** The same as CSV files in a ZIP archive: one file per kind of row. */
export function exportZip(r: ExportRequest): AsyncGenerator<Buffer> {
  return zip(csvFiles(r), r.now)
}

function csvFiles(r: ExportRequest): ZipEntry[] {
  const { sql, account, baseUrl } = r
  const links = () => exportLinks(sql, account.id)
  /** One CSV file: its header, then each link's rows of one kind of statistics (one query a link). */
  const perLink = <T>(header: string[], read: typeof linkDays | typeof linkReferrers | typeof linkBreakdowns, rows: (found: T[], code: string) => Cell[][]) =>
    async function* () {
      yield line(header)
      for (const link of await links()) yield rows((await read(sql, account.id, link.code, r.from, r.to)) as T[], link.code).map(line).join('')
    }
  const a = presentAccount(account)
  return [
    {
      name: 'account.csv',
      data: (async function* () {
        yield line(['id', 'username', 'display_name', 'created_at', 'updated_at', 'disabled'])
        yield line([a.id, a.username, a.display_name, a.created_at, a.updated_at, bool(a.disabled)])
      })(),
    },
    {
      name: 'links.csv',
      data: (async function* () {
        const columns = ['code', 'url', 'short_url', 'created_at', 'updated_at', 'visits', 'last_visited_at', 'expires_at', 'disabled', 'starts_at', 'max_visits', 'visits_left', 'password', 'tags', 'title', 'description', 'image_url', 'rules'] as const
        yield line([...columns])
        for (const link of await links()) {
          const l = presentExportLink(baseUrl, link)
          yield line(
            columns.map((c): Cell => {
              const v = l[c]
              if (c === 'tags') return l.tags.join(' ')
              if (c === 'rules') return l.rules.length === 0 ? null : JSON.stringify(l.rules)
              return typeof v === 'boolean' ? bool(v) : (v as Cell)
            }),
          )
        }
      })(),
    },
    {
      name: 'statistics_days.csv',
      data: perLink<LinkStatistics['days'][number]>(['code', 'day', 'humans', 'bots', 'uniques'], linkDays, (days, code) => days.map((d) => [code, d.day, d.humans, d.bots, d.uniques]))(),
    },
    {
      name: 'statistics_referrers.csv',
      data: perLink<LinkStatistics['referrers'][number]>(['code', 'day', 'host', 'visits'], linkReferrers, (refs, code) => refs.map((x) => [code, x.day, x.host, x.visits]))(),
    },
    {
      name: 'statistics_breakdowns.csv',
      data: perLink<LinkStatistics['breakdowns'][number]>(['code', 'day', 'breakdown', 'value', 'visits'], linkBreakdowns, (dims, code) => dims.map((m) => [code, m.day, m.dim, m.value, m.visits]))(),
    },
    {
      name: 'sessions.csv',
      data: (async function* () {
        yield line(['id', 'created_at', 'expires_at', 'last_used_at'])
        for (const s of await exportSessions(sql, account.id)) yield line([s.id, iso(s.created_at), iso(s.expires_at), iso(s.last_used_at)])
      })(),
    },
    {
      name: 'webhooks.csv',
      data: (async function* () {
        yield line(['id', 'url', 'events', 'enabled', 'disabled_reason', 'failing_since', 'created_at', 'updated_at'])
        for (const w of await exportWebhooks(sql, account.id)) {
          yield line([w.id, w.url, w.events.join(' '), bool(w.enabled), w.disabled_reason, iso(w.failing_since), iso(w.created_at), iso(w.updated_at)])
        }
      })(),
    },
    {
      name: 'webhook_deliveries.csv',
      data: (async function* () {
        yield line(['webhook_id', 'id', 'event', 'created_at', 'state', 'next_attempt_at', 'attempts', 'last_status_code', 'last_error', 'data'])
        for (const w of await exportWebhooks(sql, account.id)) {
          for await (const page of exportDeliveries(sql, account.id, w.id)) {
            yield page
              .map((d) => {
                const last = d.attempts[d.attempts.length - 1]
                return line([w.id, d.id, d.event, iso(d.created_at), d.state, iso(d.next_attempt_at), d.attempts.length, last?.status_code ?? null, last?.error ?? null, JSON.stringify(d.data)])
              })
              .join('')
          }
        }
      })(),
    },
  ]
}
