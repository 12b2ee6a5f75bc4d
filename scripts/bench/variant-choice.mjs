// `npm run build && node scripts/bench/variant-choice.mjs`: what an experiment adds to a cached
// redirect, in-process: the visitor's day hash, the weighted pick, a click id and its place in
// the Location, per visit (200,000 visits a round, 3 rounds). Prints a line a round; writes nothing.
import { randomBytes } from 'node:crypto'
import { clientKeyOf } from '../../dist/address.js'
import { newClickId, withClickId } from '../../dist/experiments/click-id.js'
import { cachedExperiment, pickVariant, visitorHash } from '../../dist/experiments/variants.js'

const VISITS = 200_000
const secret = randomBytes(32)
const experiment = cachedExperiment(['https://example.com/a', 'https://example.com/b'], [50, 50], true)
const who = (i) => clientKeyOf(`10.0.${(i >> 8) & 255}.${i & 255}`)

/** Microseconds per visit of `visit`. */
function time(visit) {
  let sink = 0
  const started = process.hrtime.bigint()
  for (let i = 0; i < VISITS; i++) sink += visit(i)
  const us = Number(process.hrtime.bigint() - started) / VISITS / 1000
  if (sink < 0) throw new Error('unreachable')
  return us.toFixed(2)
}

for (let round = 1; round <= 3; round++) {
  const choice = time((i) => pickVariant(experiment.bounds, visitorHash(secret, 20_600, 'aZ3kP9qR', who(i))))
  const withId = time((i) => {
    const v = pickVariant(experiment.bounds, visitorHash(secret, 20_600, 'aZ3kP9qR', who(i)))
    return withClickId(experiment.locations[v], newClickId(secret, 'aZ3kP9qR', v, 20_600)).length
  })
  process.stdout.write(`round ${round}: variant ${choice} µs, variant and click id ${withId} µs per visit\n`)
}
