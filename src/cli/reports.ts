// link-service report ...: the queue of abuse reports (POST /api/v1/reports). Resolving a report
// acts on its link (disable it, its owner, or its host) or dismisses it, closes every open report
// of that link, and lifts a suspension by reports (REPORTS_SUSPEND_AFTER).
import { blockHost } from '../admin/blocks.js'
import { disableLink } from '../admin/links.js'
import { disableUser } from '../admin/users.js'
import { findReport, listReports, resolveReports, type Resolution } from '../reports/queries.js'
import { CliError, columns, parseArgs, type CliCommand } from './command.js'

const list: CliCommand = {
  words: ['report', 'list'],
  usage: 'report list [--open] [--json]   (oldest first)',
  async run(ctx, args) {
    const { flags, rest, options } = parseArgs(args, [])
    const unknown = [...flags].find((f) => f !== 'open')
    if (unknown !== undefined || rest.length > 0 || options.size > 0) throw new CliError(`usage: link-service ${this.usage}`)
    const reports = await listReports((await ctx.db()).sql, flags.has('open'))
    const value = reports.map((r) => ({
      id: r.id,
      code: r.code,
      reason: r.reason,
      details: r.details,
      created_at: r.created_at.toISOString(),
      state: r.resolved_at === null ? 'open' : 'resolved',
      resolution: r.resolution,
      resolved_at: r.resolved_at?.toISOString() ?? null,
      note: r.note,
      url: r.url,
      username: r.username,
      open_for_link: r.open_for_link,
      link_suspended: r.suspended,
    }))
    const rows = [['ID', 'CODE', 'REASON', 'STATE', 'RECEIVED', 'USER', 'URL', 'DETAILS']]
    for (const r of value) {
      const state = r.state === 'open' ? (r.link_suspended ? 'open,suspended' : 'open') : r.resolution!
      rows.push([String(r.id), r.code, r.reason, state, r.created_at, r.username ?? '-', r.url ?? '(deleted)', (r.details ?? '').replace(/\s+/g, ' ').slice(0, 60)])
    }
    ctx.print(value.length === 0 ? 'no reports' : columns(rows), value)
  },
}

const ACTIONS: Record<string, Resolution> = { 'disable-link': 'disable-link', 'disable-user': 'disable-user', 'block-host': 'block-host', dismiss: 'dismiss' }

const resolve: CliCommand = {
  words: ['report', 'resolve'],
  usage: 'report resolve <id> --disable-link | --disable-user | --block-host | --dismiss [--note TEXT]',
  async run(ctx, args) {
    const { flags, rest, options } = parseArgs(args, ['note'])
    const actions = [...flags].filter((f) => f in ACTIONS)
    if (rest.length !== 1 || actions.length !== 1 || flags.size !== 1) throw new CliError(`usage: link-service ${this.usage}`)
    if (!/^\d{1,15}$/.test(rest[0]!)) throw new CliError(`not a report id: ${JSON.stringify(rest[0])}`)
    const id = Number(rest[0])
    const resolution = ACTIONS[actions[0]!]!
    const note = options.get('note') ?? null
    const sql = (await ctx.db()).sql
    const report = await findReport(sql, id)
    if (report === undefined) throw new CliError(`no such report: ${id}`)
    if (report.resolved_at !== null) throw new CliError(`report ${id} is already resolved (${report.resolution}, ${report.resolved_at.toISOString()})`)
    const { code } = report
    const done: Record<string, unknown> = {}
    if (resolution !== 'dismiss' && report.username === null) throw new CliError(`the link ${code} is deleted: only --dismiss is left`)
    if (resolution === 'disable-link') done.changed = (await disableLink(sql, code, note ?? `report ${id}`))?.changed ?? false
    else if (resolution === 'disable-user') {
      done.username = report.username
      done.sessions_ended = (await disableUser(sql, report.username!))?.sessionsEnded ?? 0
    } else if (resolution === 'block-host') {
      done.host = report.host
      done.changed = await blockHost(sql, report.host!)
    }
    const closed = await resolveReports(sql, code, resolution, note)
    const what = { 'disable-link': `disabled link ${code}`, 'disable-user': `disabled ${report.username}`, 'block-host': `blocked ${report.host}`, dismiss: `dismissed the reports of ${code}` }[resolution]
    ctx.report(`${what}; ${closed} open report(s) of ${code} resolved`, { action: `report.${resolution}`, id, code, note, reports_resolved: closed, ...done })
  },
}

export const REPORT_COMMANDS: CliCommand[] = [list, resolve]
