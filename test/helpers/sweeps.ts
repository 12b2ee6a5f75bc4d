// The full sweeps of an in-memory limit table (MemoryLimiter, MemoryLeakyBuckets), counted: the
// table calls its own sweep at the cap, so the count is what a flood of new keys costs.
export function countSweeps(table: { sweep(at?: number): void }): () => number {
  let sweeps = 0
  const sweep = table.sweep.bind(table)
  table.sweep = (at) => {
    sweeps++
    sweep(at)
  }
  return () => sweeps
}
