// Waiting on a promise with a bound, and nothing else: a leaf that the database pool, the health
// check and the service's stop may use without reaching up into the request's time limit.

/** 'late' when `work` has not settled within `ms` (it carries on; nobody waits for it). */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<'done' | 'late'> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)))
  try {
    return await Promise.race([work.then(() => 'done' as const), late])
  } finally {
    clearTimeout(timer)
  }
}

/** true when `work` fulfils within `ms`; false when it fails or is late (a health check's question). */
export const succeedsWithin = (work: Promise<unknown>, ms: number): Promise<boolean> =>
  settlesWithin(work, ms).then(
    (outcome) => outcome === 'done',
    () => false,
  )
