// The link.clicked events of a flush, queued in the flush's transaction for the owners' webhooks
// (queue_webhook_event): per link, the count and, with statistics on, its split.
import type { Tx } from '../db/types.js'

/** One flush's link.clicked events, in the flush's transaction: per link, the count and its split. */
export interface Clicks {
  codes: string[]
  counts: number[]
  /** null without per-day statistics */
  humans: Array<number | null>
  bots: Array<number | null>
  /** JSON objects: referrer host → visits */
  referrers: string[]
}

export async function queueClicks(tx: Tx, c: Clicks): Promise<void> {
  await tx`
    select queue_webhook_event(l.user_id, 'link.clicked',
      jsonb_build_object('code', l.code, 'count', v.n, 'humans', v.humans, 'bots', v.bots, 'referrers', v.refs::jsonb))::text
    from unnest(${c.codes}::text[], ${c.counts}::int[], ${c.humans}::int[], ${c.bots}::int[], ${c.referrers}::text[])
      as v(code, n, humans, bots, refs)
    join links l on l.code = v.code and l.deleted_at is null
    where exists (select 1 from webhooks w where w.user_id = l.user_id and w.enabled and 'link.clicked' = any(w.events))`
}
