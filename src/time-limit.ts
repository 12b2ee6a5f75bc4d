// Waiting on the database with a bound: a connection that went silent (no reset, no refusal)
// would otherwise hold a health check or a shutdown for as long as TCP keeps retrying.
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
