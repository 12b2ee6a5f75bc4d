// Threat feeds kept fresh: every source of BLOCKLIST_SOURCES is read at start and every
// BLOCKLIST_REFRESH_S, conditionally, by one node of the cluster at a time (a PostgreSQL advisory
// lock held for the round); a node that finds a source checked lately by another leaves it. A
// failed read or load keeps the last good list, is logged and counted.
import type { Database, Sql } from '../db/types.js'
import type { Logger } from '../log.js'
import type { Metrics } from '../metrics.js'
import { FeedTooLarge, parseFeed, type ParsedFeed } from './parse.js'
import { dueAt, findSource, loadSource, markFailed, markUnchanged, type LoadResult } from './queries.js'
import { FeedError, readSource } from './read-source.js'

const REFRESH_LOCK = 7_245_011 // arbitrary, fixed: every node must use the same key

/** A refresh that would lose more than this share of a list's entries is refused... */
export const SHRINK_REFUSED = 0.5
/** ...when that is at least this many entries (a small list may shrink by half in earnest). */
export const SHRINK_REFUSED_MIN = 100

/** Why a feed that was read whole was not loaded: each a label of link_service_blocklist_refused_total. */
export type Refusal = 'empty' | 'invalid' | 'shrink' | 'too_large'

export type RefreshOutcome =
  | { outcome: 'updated'; load: LoadResult; feed: ParsedFeed }
  | { outcome: 'unchanged' }
  | { outcome: 'failed'; error: string; refused?: Refusal }

class FeedRefused extends FeedError {
  constructor(
    readonly reason: Refusal,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Why `feed` must not replace a list of `before` entries, or undefined when it may. A feed that
 * answers garbage with 200 (an error page, an empty body, a login form, a file cut short) would
 * otherwise unblock what it listed: a feed is refused when it gives no host where there were some,
 * when most of its lines are invalid, or when it would lose more than half of a list (and at least
 * SHRINK_REFUSED_MIN entries). The last good list stays; the operator can load it anyway (`block
 * import --force`).
 */
export function refusalOf(feed: ParsedFeed, before: number): { reason: Refusal; message: string } | undefined {
  const after = feed.hosts.size
  if (after === 0 && feed.invalid > 0) return { reason: 'invalid', message: `no valid entry in ${feed.invalid} lines` }
  if (after === 0 && before > 0) return { reason: 'empty', message: `no entry at all, where the list has ${before}` }
  if (feed.invalid * 2 > feed.lines) return { reason: 'invalid', message: `${feed.invalid} of its ${feed.lines} lines are invalid` }
  const lost = before - after
  if (lost >= SHRINK_REFUSED_MIN && lost > before * SHRINK_REFUSED) return { reason: 'shrink', message: `it would shrink the list from ${before} to ${after} entries` }
  return undefined
}

/**
 * Reads one source and, when it changed, loads it. `reread`: read it whole, whatever was seen
 * before. `force`: load it even when refusalOf refuses it. `checkedAt`: the database time the
 * check began (see dueAt).
 */
export async function refreshSource(
  sql: Sql,
  name: string,
  location: string,
  opts: { reread?: boolean; force?: boolean; stop?: AbortSignal; checkedAt?: Date } = {},
): Promise<RefreshOutcome> {
  const { reread = false, force = false, stop, checkedAt } = opts
  const known = await findSource(sql, name)
  // Validators only go with a list that was loaded: otherwise a 304 would keep an empty one.
  const validators = reread || known?.loaded_at == null ? undefined : { etag: known.etag, lastModified: known.last_modified }
  let feed: ParsedFeed
  let read
  try {
    read = await readSource(location, validators, stop)
    if (!read.changed) {
      await markUnchanged(sql, name, checkedAt)
      return { outcome: 'unchanged' }
    }
    try {
      feed = await parseFeed(read.body)
    } catch (err) {
      if (err instanceof FeedTooLarge) throw new FeedRefused('too_large', `${location}: ${err.message}`)
      throw err
    }
    const refusal = refusalOf(feed, known?.loaded_at == null ? 0 : known.entries)
    if (refusal !== undefined && !force) throw new FeedRefused(refusal.reason, `refused: ${refusal.message}; kept the last good list`)
  } catch (err) {
    if (!(err instanceof FeedError)) throw err
    // A read cut short by a shutdown says nothing about the feed.
    if (stop?.aborted === true) return { outcome: 'unchanged' }
    await markFailed(sql, name, location, err.message, checkedAt)
    return err instanceof FeedRefused ? { outcome: 'failed', error: err.message, refused: err.reason } : { outcome: 'failed', error: err.message }
  }
  const load = await loadSource(sql, { name, location, validators: read.validators, invalid: feed.invalid, checkedAt }, feed.hosts)
  return { outcome: 'updated', load, feed }
}

/**
 * Runs `work` while holding the cluster-wide refresh lock, or not at all (undefined) when another
 * node holds it. The embedded database has one process: no lock is needed.
 */
async function withRefreshLock<T>(db: Database, work: () => Promise<T>): Promise<T | undefined> {
  if (db.embedded) return work()
  // A session lock, on a connection of its own for as long as the round takes (reads included):
  // if this node dies, its connection closes and the lock goes with it.
  const conn = await db.sql.reserve()
  try {
    const [{ locked }] = (await conn`select pg_try_advisory_lock(${REFRESH_LOCK}) as locked`) as unknown as [{ locked: boolean }]
    if (!locked) return undefined
    try {
      return await work()
    } finally {
      await conn`select pg_advisory_unlock(${REFRESH_LOCK})`
    }
  } finally {
    conn.release()
  }
}

export interface FeedSource {
  name: string
  location: string
}

export interface RefreshJob {
  /** one round now (tests, and the first at start); resolves when it is done */
  round(): Promise<void>
  stop(): Promise<void>
}

/**
 * `changed` is called when a load changed the list: this node forgets its cached redirects at once
 * (other nodes are told by the load's NOTIFY; the embedded database has no other node, nor a feed).
 */
export function startRefreshJob(db: Database, sources: readonly FeedSource[], refreshSeconds: number, log: Logger, metrics: Metrics, changed: () => void): RefreshJob {
  // Timers of several nodes drift apart: a source checked within the last tenth of a period
  // before this node's turn still counts as checked for this one.
  const dueAfterSeconds = refreshSeconds - Math.max(1, refreshSeconds / 10)
  let running: Promise<void> | undefined
  const stopping = new AbortController()

  const refreshOne = async ({ name, location }: FeedSource) => {
    const checkedAt = await dueAt(db.sql, name, dueAfterSeconds)
    if (checkedAt === undefined) return
    const started = performance.now()
    const result = await refreshSource(db.sql, name, location, { stop: stopping.signal, checkedAt })
    const seconds = (performance.now() - started) / 1000
    metrics.blocklistRefresh(name, result.outcome, seconds)
    if (result.outcome === 'failed' && result.refused !== undefined) {
      metrics.blocklistRefused(name, result.refused)
      log.warn('blocklist refresh refused; the last good list stays', { source: name, reason: result.refused, error: result.error })
    } else if (result.outcome === 'failed') log.warn('blocklist refresh failed; the last good list stays', { source: name, error: result.error })
    else if (result.outcome === 'updated') {
      if (result.load.added + result.load.removed > 0) changed()
      log.info('blocklist loaded', { source: name, ...result.load, invalid_lines: result.feed.invalid, public_suffixes: result.feed.suffixes, seconds: Math.round(seconds * 1000) / 1000 })
    }
  }

  const round = () =>
    (running ??= (async () => {
      try {
        await withRefreshLock(db, async () => {
          for (const source of sources) {
            if (stopping.signal.aborted) return
            await refreshOne(source).catch((err: unknown) => {
              metrics.blocklistRefresh(source.name, 'failed', 0)
              log.warn('blocklist refresh failed; the last good list stays', { source: source.name, err })
            })
          }
        })
      } catch (err) {
        log.warn('blocklist refresh round failed', { err })
      } finally {
        running = undefined
      }
    })())

  const timer = setInterval(() => void round(), refreshSeconds * 1000).unref()
  void round()
  return {
    round,
    async stop() {
      stopping.abort() // a read under way ends at once; a load under way finishes (one transaction)
      clearInterval(timer)
      await running
    },
  }
}
