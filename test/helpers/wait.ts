// Waiting in tests: a plain pause, and waiting for something that happens in the background (a
// flush, a notification) without a fixed sleep: poll until it is true, or fail when time is up.

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls until check() is true, every `every` ms, or throws after `ms` (with `why()`, when given,
 * in the message); returns how long it took.
 */
export async function until(ms: number, check: () => boolean | Promise<boolean>, opts: { every?: number; why?: () => string } = {}): Promise<number> {
  const start = Date.now()
  for (;;) {
    if (await check()) return Date.now() - start
    if (Date.now() - start > ms) throw new Error(`not true within ${ms} ms${opts.why === undefined ? '' : `; ${opts.why()}`}`)
    await sleep(opts.every ?? 20)
  }
}
