// SQL of experiments: the secret, a link's experiment as written and read, a flush of variant
// visits, a conversion, the results of a range, the promotion of a winner, and the sweep.
import { randomBytes } from 'node:crypto'
import { LINK_CHANNEL } from '../db/channels.js'
import type { Sql, Tx } from '../db/types.js'
import type { Arm } from './significance.js'
import { emptySketch, estimate, mergeSketch } from '../stats/sketch.js'
import type { Variant } from './variants.js'

/** A variant as stored: as the API gives it, with its Location form and host (computed on write). */
export interface StoredVariant extends Variant {
  location: string
  host: string
}

/** A link's experiment; absent (undefined) for a link with none. */
export interface Experiment {
  variants: StoredVariant[]
  conversions: boolean
  promoteWinner: boolean
  /** "YYYY-MM-DD" */
  startedOn: string
}

/** The service's experiment secret, made by whichever node asks first (as daySalt is). */
export async function experimentSecret(sql: Sql): Promise<Buffer> {
  const [row] = await sql<{ secret: Buffer }[]>`
    insert into experiment_secret (one, secret) values (true, ${randomBytes(32)})
    on conflict (one) do update set secret = experiment_secret.secret
    returning secret`
  return row!.secret
}

export async function findExperiment(sql: Sql | Tx, code: string): Promise<Experiment | undefined> {
  const [row] = await sql<{ variants: StoredVariant[]; conversions: boolean; promote_winner: boolean; started_on: string }[]>`
    select variants, conversions, promote_winner, started_on::text as started_on from link_experiments where code = ${code}`
  return row === undefined ? undefined : { variants: row.variants, conversions: row.conversions, promoteWinner: row.promote_winner, startedOn: row.started_on }
}

/** What a create or PATCH asks of the experiment: an absent part stays as it is. */
export interface ExperimentChange {
  variants?: StoredVariant[]
  conversions?: boolean
  promoteWinner?: boolean
}

/**
 * Writes a live link's experiment in the transaction of the link's own write; tells the nodes to
 * forget the code (the link's write does too, but a change of the experiment alone must).
 * Changed variant urls start afresh: the results of the old ones are deleted, the start is today.
 * None of it left (no variants, no conversions): the row goes.
 */
export async function writeExperiment(tx: Sql | Tx, code: string, change: ExperimentChange): Promise<Experiment | undefined> {
  const before = await findExperiment(tx, code)
  const variants = change.variants ?? before?.variants ?? []
  const conversions = change.conversions ?? before?.conversions ?? false
  const promoteWinner = change.promoteWinner ?? before?.promoteWinner ?? false
  const sameUrls = before !== undefined && JSON.stringify(before.variants.map((v) => v.url)) === JSON.stringify(variants.map((v) => v.url))
  await tx`select pg_notify(${LINK_CHANNEL}, ${code})`
  if (variants.length === 0 && !conversions) {
    await tx`delete from link_experiments where code = ${code}`
    await tx`delete from experiment_days where code = ${code}`
    return undefined
  }
  if (!sameUrls) await tx`delete from experiment_days where code = ${code}`
  const [row] = await tx<{ started_on: string }[]>`
    insert into link_experiments (code, variants, variant_domains, conversions, promote_winner, started_on)
    values (${code}, ${JSON.stringify(variants)}::text::jsonb, rule_domains_of(${variants.map((v) => v.host)}::text[]),
            ${conversions}, ${promoteWinner}, (now() at time zone 'utc')::date)
    on conflict (code) do update set variants = excluded.variants, variant_domains = excluded.variant_domains,
      conversions = excluded.conversions, promote_winner = excluded.promote_winner,
      started_on = case when ${sameUrls}::boolean then link_experiments.started_on else excluded.started_on end
    returning started_on::text as started_on`
  return { variants, conversions, promoteWinner, startedOn: row!.started_on }
}

/** One flush of variant visits: each array in the same (code, day, variant) order. */
export interface VariantBatch {
  codes: string[]
  days: string[]
  variants: number[]
  visits: number[]
  /** hex sketches of the visitors (stats/sketch.ts), merged into the stored ones */
  sketches: string[]
}

/**
 * Adds a flush's visits and merges its sketches, in one transaction, once: `ids` name the batches
 * it carries and are recorded in visit_flushes (beside the visit flushes' own, swept with them)
 * in the same transaction; `rowsFor` gets those recorded now (an id already there was written by
 * an attempt whose COMMIT we did not hear back from). `committing` is called once every statement
 * is done. Rows of links without an experiment (any more) are left out. The upsert's row locks
 * order concurrent flushes, as for visit_days.
 */
export function writeVariantVisits(sql: Sql, ids: string[], rowsFor: (recorded: ReadonlySet<string>) => VariantBatch, committing: () => void): Promise<void> {
  return sql.begin(async (tx) => {
    const recorded = await tx<{ id: string }[]>`
      insert into visit_flushes (id) select unnest(${ids}::uuid[]) on conflict do nothing returning id::text as id`
    await writeVariantRows(tx, rowsFor(new Set(recorded.map((r) => r.id))))
    committing()
  })
}

/** A flush's rows (VariantBatch), each (code, day, variant) once. */
async function writeVariantRows(tx: Tx, b: VariantBatch): Promise<void> {
  if (b.codes.length === 0) return
  const touched = await tx<{ code: string; day: string; variant: number; sketch: Buffer | null }[]>`
    insert into experiment_days as d (code, day, variant, visits)
    select v.code, v.day, v.variant, v.n
    from unnest(${b.codes}::text[], ${b.days}::date[], ${b.variants}::smallint[], ${b.visits}::int[]) as v(code, day, variant, n)
    join link_experiments e on e.code = v.code and v.day >= e.started_on
    order by v.code, v.day, v.variant
    on conflict (code, day, variant) do update set visits = d.visits + excluded.visits
    returning d.code, d.day::text as day, d.variant, d.sketch`
  const stored = new Map(touched.map((r) => [`${r.code} ${r.day} ${r.variant}`, r.sketch]))
  const changed: Pick<VariantBatch, 'codes' | 'days' | 'variants' | 'sketches'> = { codes: [], days: [], variants: [], sketches: [] }
  b.codes.forEach((code, i) => {
    const key = `${code} ${b.days[i]} ${b.variants[i]}`
    if (!stored.has(key)) return
    const into = new Uint8Array(stored.get(key) ?? emptySketch())
    if (!mergeSketch(into, Buffer.from(b.sketches[i]!, 'hex'))) return
    changed.codes.push(code)
    changed.days.push(b.days[i]!)
    changed.variants.push(b.variants[i]!)
    changed.sketches.push(Buffer.from(into).toString('hex'))
  })
  if (changed.codes.length === 0) return
  await tx`
    update experiment_days d set sketch = decode(v.sketch, 'hex')
    from unnest(${changed.codes}::text[], ${changed.days}::date[], ${changed.variants}::smallint[], ${changed.sketches}::text[]) as v(code, day, variant, sketch)
    where d.code = v.code and d.day = v.day and d.variant = v.variant`
}

/**
 * A conversion of click id `id` (already verified): counted once, for a live link whose
 * experiment has conversions on, a variant it has, and a day since its start. 'counted', 'seen'
 * (the id converted before) or 'unknown' (no such link, experiment, variant or day).
 */
export async function recordConversion(sql: Sql, id: string, code: string, variant: number, day: string): Promise<'counted' | 'seen' | 'unknown'> {
  const [row] = await sql<{ outcome: 'counted' | 'seen' | 'unknown' }[]>`
    with valid as (
      select 1 from link_experiments e join links l on l.code = e.code and l.deleted_at is null
      where e.code = ${code} and e.conversions and ${day}::date >= e.started_on
        and ${variant}::int < greatest(jsonb_array_length(e.variants), 1)
    ),
    seen as (
      insert into conversions_seen (id, day) select ${id}, ${day}::date from valid
      on conflict (id) do nothing returning id
    ),
    counted as (
      insert into experiment_days as d (code, day, variant, conversions)
      select ${code}, ${day}::date, ${variant}, 1 from seen
      on conflict (code, day, variant) do update set conversions = d.conversions + 1
      returning 1
    )
    select case when not exists (select 1 from valid) then 'unknown'
                when exists (select 1 from counted) then 'counted' else 'seen' end as outcome`
  return row!.outcome
}

/** A link's experiment results: its arms (the variants, or the link's url alone with conversions only), its rows of the range, and its totals since its start. */
export interface Results {
  arms: Variant[]
  days: Array<{ day: string; variant: number; visits: number; conversions: number; uniques: number }>
  totals: Arm[]
}

/** What experiment_results gives (sql/0027), read with the link's statistics; null without an experiment. */
export type RawResults = {
  variants: StoredVariant[]
  url: string
  rows: Array<[day: string, variant: number, visits: number, conversions: number, sketch: string | null, inRange: boolean]>
} | null

/** The results of a link's experiment, from what experiment_results gave; undefined without one. A day's uniques are an estimate (stats/sketch.ts), never shown above its visits. */
export function resultsOf(given: unknown): Results | undefined {
  const raw = given as RawResults
  if (raw === null) return undefined
  const arms: Variant[] = raw.variants.length > 0 ? raw.variants.map((v) => ({ url: v.url, weight: v.weight })) : [{ url: raw.url, weight: 100 }]
  const totals: Arm[] = arms.map(() => ({ visits: 0, conversions: 0 }))
  const days: Results['days'] = []
  for (const [day, variant, visits, conversions, sketch, inRange] of raw.rows) {
    if (variant >= arms.length) continue
    totals[variant]!.visits += visits
    totals[variant]!.conversions += conversions
    if (inRange) days.push({ day, variant, visits, conversions, uniques: sketch === null ? 0 : Math.min(visits, Math.round(estimate(Buffer.from(sketch, 'hex')))) })
  }
  return { arms, days, totals }
}

/** Totals per variant since each experiment's start, for those of `codes` whose winner is to be promoted. */
export async function promotionCandidates(sql: Sql, codes: string[]): Promise<Array<{ code: string; variants: StoredVariant[]; arms: Arm[] }>> {
  const rows = await sql<{ code: string; variants: StoredVariant[]; variant: number | null; visits: number; conversions: number }[]>`
    select e.code, e.variants, d.variant, coalesce(sum(d.visits), 0)::float8 as visits, coalesce(sum(d.conversions), 0)::float8 as conversions
    from link_experiments e left join experiment_days d on d.code = e.code and d.day >= e.started_on
    where e.code = any(${codes}::text[]) and e.promote_winner and jsonb_array_length(e.variants) >= 2
    group by e.code, e.variants, d.variant`
  const byCode = new Map<string, { code: string; variants: StoredVariant[]; arms: Arm[] }>()
  for (const r of rows) {
    let c = byCode.get(r.code)
    if (c === undefined) byCode.set(r.code, (c = { code: r.code, variants: r.variants, arms: r.variants.map(() => ({ visits: 0, conversions: 0 })) }))
    if (r.variant !== null && r.variant < c.arms.length) c.arms[r.variant] = { visits: r.visits, conversions: r.conversions }
  }
  return [...byCode.values()]
}

/**
 * The winner becomes the link's url and its variants end (conversions stay as they were), in one
 * transaction: the links trigger queues link.updated, the notice tells every node. Only if the
 * variants are still those judged (an owner's change meanwhile wins). True when promoted.
 */
export async function promoteWinner(sql: Sql, code: string, judged: StoredVariant[], winner: StoredVariant): Promise<boolean> {
  return sql.begin(async (tx) => {
    const [ended] = await tx<{ code: string }[]>`
      update link_experiments set variants = '[]', variant_domains = null, promote_winner = false, started_on = (now() at time zone 'utc')::date
      where code = ${code} and promote_winner and variants = ${JSON.stringify(judged)}::text::jsonb
      returning code`
    if (ended === undefined) return false
    const [updated] = await tx<{ code: string }[]>`
      update links l set url = ${winner.url}, location = ${winner.location}, host_domains = domains_of(${winner.host}),
        updated_at = greatest(now(), l.updated_at + interval '1 millisecond')
      where l.code = ${code} and l.deleted_at is null and l.disabled_at is null and l.suspended_at is null
      returning l.code`
    if (updated === undefined) throw new RollBack()
    await tx`delete from link_experiments where code = ${code} and not conversions`
    await tx`select pg_notify(${LINK_CHANNEL}, ${code})`
    return true
  }).catch((err: unknown) => (err instanceof RollBack ? false : Promise.reject(err)))
}

class RollBack extends Error {}

/** Click ids past any window, and variant rows past retention or of deleted links, deleted. */
export async function sweepExperiments(sql: Sql, seenBefore: string, keepFrom: string): Promise<void> {
  await sql`delete from conversions_seen where day < ${seenBefore}::date`
  await sql`delete from experiment_days where day < ${keepFrom}::date`
  await sql`
    with gone as (delete from link_experiments e using links l where l.code = e.code and l.deleted_at is not null returning e.code)
    delete from experiment_days d using gone where d.code = gone.code`
}
