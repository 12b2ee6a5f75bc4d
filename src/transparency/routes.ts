// GET /transparency (a page) and /transparency.json: the last twelve months' figures, worked out
// at most once a minute per database (the routes are public and need no account). 404 with
// TRANSPARENCY=off.
import type { Ctx } from '../context.js'
import type { Sql } from '../db/types.js'
import { routeNotFound } from '../http/errors.js'
import { bytes, json, type Reply } from '../http/reply.js'
import { visitorMessages } from '../links/visitor.js'
import { languageHeaders, PAGE_HEADERS } from '../web/visitor-pages.js'
import { transparencyPage } from './page.js'
import { monthlyFigures, type MonthFigures } from './queries.js'

export const REPORT_MONTHS = 12
const FRESH_MS = 60_000

type TransparencyCtx = Ctx<'sql' | 'config'>

const computed = new WeakMap<Sql, { at: number; months: Promise<MonthFigures[]> }>()

function figures(ctx: TransparencyCtx): Promise<MonthFigures[]> {
  if (!ctx.deps.config.trust.transparency) throw routeNotFound()
  const now = Date.now()
  const last = computed.get(ctx.deps.sql)
  if (last !== undefined && now - last.at < FRESH_MS) return last.months
  const months = monthlyFigures(ctx.deps.sql, REPORT_MONTHS)
  computed.set(ctx.deps.sql, { at: now, months })
  months.catch(() => computed.delete(ctx.deps.sql))
  return months
}

const CACHE = { 'cache-control': 'public, max-age=60' }

export async function getTransparencyJson(ctx: TransparencyCtx): Promise<Reply> {
  return json(200, { months: await figures(ctx) }, CACHE)
}

/** The page in the visitor's language (Accept-Language; Vary says so, for the cache the minute allows). */
export async function getTransparencyPage(ctx: TransparencyCtx): Promise<Reply> {
  const m = visitorMessages(ctx.req)
  const html = transparencyPage(await figures(ctx), m)
  return bytes(200, PAGE_HEADERS['content-type'], Buffer.from(html), { ...PAGE_HEADERS, ...languageHeaders(m), ...CACHE })
}
