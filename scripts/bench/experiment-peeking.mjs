// `npm run build && node scripts/bench/experiment-peeking.mjs`: how often the experiments' test
// calls a winner when owners look every day, against a naive two-proportion z-test looked at the
// same way. Simulated experiments with a seeded generator (the same figures every run); prints
// one line per case; writes nothing. docs/decisions.md, "Experiments", quotes it.
import { judge } from '../../dist/experiments/significance.js'

/** mulberry32: small, seeded, good enough to draw visits. */
function seeded(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
}

/** The naive test: a two-sided two-proportion z-test at 5%, as if each look were the only one. */
function naive(arms) {
  const [a, b] = arms
  if (a.visits < 100 || b.visits < 100) return false
  const p = (a.conversions + b.conversions) / (a.visits + b.visits)
  const se = Math.sqrt(p * (1 - p) * (1 / a.visits + 1 / b.visits))
  return se > 0 && Math.abs(a.conversions / a.visits - b.conversions / b.visits) / se > 1.959964
}

/** The day a test first calls a winner, looking after every day, or null. */
function firstCall(rates, perDay, days, random, calls) {
  const arms = rates.map(() => ({ visits: 0, conversions: 0 }))
  for (let day = 1; day <= days; day++) {
    for (let i = 0; i < perDay; i++) {
      const a = Math.floor(random() * rates.length)
      arms[a].visits++
      if (random() < rates[a]) arms[a].conversions++
    }
    if (calls(arms)) return day
  }
  return null
}

const ours = (arms) => judge(arms).confident
const CASES = [
  ['equal 10% and 10%, 200 visits a day, 60 daily looks', [0.1, 0.1], 200, 60],
  ['four equal arms of 5%, 400 visits a day, 30 daily looks', [0.05, 0.05, 0.05, 0.05], 400, 30],
  ['10% against 15%, 400 visits a day, 60 daily looks', [0.1, 0.15], 400, 60],
  ['10% against 11%, 400 visits a day, 60 daily looks', [0.1, 0.11], 400, 60],
]
const RUNS = 1000
for (const [name, rates, perDay, days] of CASES) {
  for (const [test, calls] of rates.length === 2 ? [['mSPRT', ours], ['naive z', naive]] : [['mSPRT', ours]]) {
    const random = seeded(36)
    const when = []
    for (let i = 0; i < RUNS; i++) {
      const day = firstCall(rates, perDay, days, random, calls)
      if (day !== null) when.push(day)
    }
    when.sort((a, b) => a - b)
    const median = when.length === 0 ? '-' : when[when.length >> 1]
    process.stdout.write(`${name}: ${test} called ${when.length} of ${RUNS} (median day ${median})\n`)
  }
}
