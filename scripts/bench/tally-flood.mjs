// What the visit tally thread holds under a flood of long headers faster than it can fold them:
// 400,000 visits of one link, each with an 8 KB User-Agent and an 8 KB Referer never sent before,
// recorded in a tight loop. Prints how long the recording took, the process's highest RSS while it
// ran, and whether every visit came back from the take. Without the hand-over's bound
// (tally-thread.ts MAX_BEHIND_CHARS) the same run held about 1.5 GB.
//   npm run build && node scripts/bench/tally-flood.mjs [dist folder=dist]
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT } from './lib.mjs'

const dist = resolve(process.argv[2] ?? join(ROOT, 'dist'))
const { TallyThread } = await import(pathToFileURL(join(dist, 'stats/tally-thread.js')).href)
const VISITS = 400_000
const thread = new TallyThread(undefined, (err) => {
  throw err
})
const agent = `Mozilla/5.0 ${'b'.repeat(8_000)}`
const referer = `https://x.example/${'a'.repeat(8_000)}`
const started = performance.now()
let maxRss = 0
for (let i = 0; i < VISITS; i++) {
  thread.record('AAAAAAAA', { userAgent: agent + i, referer: referer + i, forwardedFor: undefined, peer: `192.0.2.${i % 250}` }, Date.now())
  if (i % 10_000 === 0) maxRss = Math.max(maxRss, process.memoryUsage().rss)
}
const ms = performance.now() - started
const taken = await thread.take()
await thread.close()
const counted = [...taken.batch.values()].reduce((n, p) => n + p.count, 0)
console.log(`${VISITS} visits recorded in ${Math.round(ms)} ms; highest RSS ${Math.round(maxRss / 1e6)} MB; ${counted} counted`)
