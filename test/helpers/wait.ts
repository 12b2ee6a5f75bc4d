// Waiting for something that happens in the background (a flush, a notification) without a
// fixed sleep: poll until it is true, or fail when the time is up.

/** Polls until check() is true or `ms` have passed (then throws); returns how long it took. */
export async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now()
  for (;;) {
    if (await check()) return Date.now() - start
    if (Date.now() - start > ms) throw new Error(`not true within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
