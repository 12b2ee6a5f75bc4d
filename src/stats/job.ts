// The statistics' daily job, run by every node every 10 minutes (one at a time, by an advisory
// lock): a UTC day that ended more than REDUCE_GRACE_MS ago has its visitor hashes reduced to a
// count and deleted with its salt; days older than STATS_RETENTION_DAYS are dropped, partitions
// and all, the partitions of yesterday to DAYS_AHEAD days ahead are there (visit_stats_partition), and a
// finished month's days are merged into one partition (copied beside users' reads and writes,
// then swapped in), and deleted links' statistics deleted (maintainStats). Each step that locks
// the tables yields to users: when it cannot have its locks at once it does nothing, and the job
// runs again YIELD_RETRY_MS later (with jitter) rather than at the next 10 minutes.
import { isConflictVictim } from '../db/retry.js'
import type { Sql } from '../db/types.js'
import type { Logger } from '../log.js'
import { maintainStats } from './queries.js'
import { dateOf } from './visits.js'

const JOB_EVERY_MS = 10 * 60_000
const FIRST_RUN_MS = 5_000
/** After yielding, the job runs again in this many milliseconds, plus up to as much again at random. */
export const YIELD_RETRY_MS = 10_000
const DAY_MS = 86_400_000
/** The coming days' partitions exist this many days ahead: a job that cannot run for a while
 *  (the database away) does not leave the flushes writing to the default partition. */
const DAYS_AHEAD = 3
/** Past a day's end, how long flushes (at most VISIT_FLUSH_MS late, plus clock skew) may still add to it. */
export const REDUCE_GRACE_MS = 15 * 60_000

/** The first UTC day ("YYYY-MM-DD") whose statistics are kept at `nowMs`: the reads start there too
 *  (a merged month is dropped only when its last day passes, visit_stats_maintain). */
export function firstRetainedDay(nowMs: number, retentionDays: number): string {
  return dateOf(Math.floor(nowMs / DAY_MS) - retentionDays + 1)
}

/**
 * The bounds of one run at `nowMs`: reduce days before `reduceBefore`, keep days from `keepFrom`,
 * and have the partitions of the days from `createFrom` (yesterday: a flush may still add to it)
 * to `aheadTo`.
 */
export function statsJobBounds(nowMs: number, retentionDays: number): { reduceBefore: string; keepFrom: string; createFrom: string; aheadTo: string } {
  const today = Math.floor(nowMs / DAY_MS)
  return {
    reduceBefore: dateOf(Math.floor((nowMs - REDUCE_GRACE_MS) / DAY_MS)),
    keepFrom: firstRetainedDay(nowMs, retentionDays),
    createFrom: dateOf(today - 1),
    aheadTo: dateOf(today + DAYS_AHEAD),
  }
}

/** The job gave way: its locks were not to be had in time (55P03), or it lost a conflict (40P01, 40001). */
const gaveWay = (err: unknown) => (err as { code?: unknown } | null)?.code === '55P03' || isConflictVictim(err)

export function startStatsJob(sql: Sql, log: Logger, retentionDays: number): { stop(): void } {
  let retry: NodeJS.Timeout | undefined
  const soon = () => {
    const inMs = Math.round(YIELD_RETRY_MS * (1 + Math.random()))
    log.debug('statistics job yielded to users; trying again soon', { retry_in_ms: inMs })
    clearTimeout(retry)
    retry = setTimeout(run, inMs).unref()
  }
  const run = () => {
    clearTimeout(retry)
    const { reduceBefore, keepFrom, createFrom, aheadTo } = statsJobBounds(Date.now(), retentionDays)
    maintainStats(sql, reduceBefore, keepFrom, createFrom, aheadTo).then(
      (outcome) => {
        if (outcome === 'yielded') soon()
      },
      (err: unknown) => {
        if (gaveWay(err)) soon()
        else log.warn('statistics job failed; retrying later', { err })
      },
    )
  }
  const first = setTimeout(run, FIRST_RUN_MS).unref()
  const timer = setInterval(run, JOB_EVERY_MS).unref()
  return {
    stop() {
      clearTimeout(first)
      clearTimeout(retry)
      clearInterval(timer)
    },
  }
}
