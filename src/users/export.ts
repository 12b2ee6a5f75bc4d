// GET /api/v1/users/me/export: everything the service keeps about the caller, for them to take
// away (GDPR art. 20). JSON by default, CSV files in a ZIP with ?format=zip. Made as it is sent.
import { sessionOf, type Ctx } from '../context.js'
import { unauthorized } from '../http/errors.js'
import { Query } from '../http/query.js'
import { streamed, type Reply } from '../http/reply.js'
import { takeOrRefuse } from '../ratelimit/leaky.js'
import { firstRetainedDay } from '../stats/job.js'
import { findExportAccount } from './export-data.js'
import { exportJson, exportZip, type ExportRequest } from './export-formats.js'

type ExportCtx = Ctx<'sql' | 'baseUrl' | 'config' | 'buckets' | 'log'>

/** An export reads every link's statistics: a few a minute per account. */
export const EXPORTS_PER_ACCOUNT = { limit: 3, drainPerSecond: 3 / 60 }

const FORMATS = ['json', 'zip'] as const

export async function getExport(ctx: ExportCtx): Promise<Reply> {
  const { userId } = sessionOf(ctx)
  const q = new Query(ctx.req.url)
  const format = q.oneOf('format', FORMATS) ?? 'json'
  q.check()
  await takeOrRefuse(ctx.deps.buckets, `exports account ${userId}`, EXPORTS_PER_ACCOUNT)
  const account = await findExportAccount(ctx.deps.sql, userId)
  if (account === undefined) throw unauthorized() // deleted between auth and now
  const now = new Date()
  const request: ExportRequest = {
    sql: ctx.deps.sql,
    account,
    baseUrl: ctx.deps.baseUrl,
    from: firstRetainedDay(now.getTime(), ctx.deps.config.statsRetentionDays),
    to: now.toISOString().slice(0, 10),
    now,
  }
  // Past the first byte a failure can only cut the connection: it is logged here, or never.
  async function* logged<T>(chunks: AsyncGenerator<T>): AsyncGenerator<T> {
    try {
      yield* chunks
    } catch (err) {
      ctx.deps.log.warn('export failed after it began', { format, err })
      throw err
    }
  }
  const name = `link-service-${account.username.replace(/[^a-z0-9._-]/g, "_")}-${request.to}`
  return format === 'zip'
    ? streamed(200, 'application/zip', logged(exportZip(request)), { 'content-disposition': `attachment; filename="${name}.zip"` })
    : streamed(200, 'application/json; charset=utf-8', logged(exportJson(request)), { 'content-disposition': `attachment; filename="${name}.json"` })
}
