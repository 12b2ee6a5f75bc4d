// The tally thread (tally-thread.ts): folds the raw visits it is sent into a VisitTally, and
// answers a take with the batch in chunks, the next chunk when it is asked for. It keeps the batch
// it last gave until the next take, for a `back` (a flush that surely failed).
import type { BlockList } from 'node:net'
import { parentPort, workerData } from 'node:worker_threads'
import { CHUNK_LINKS, type FromTally, type ToTally } from './tally-thread.js'
import { VisitTally, type Pending, type Taken } from './visit-tally.js'

const { trustProxy, folded } = workerData as { trustProxy: BlockList | undefined; folded: SharedArrayBuffer }
const foldedCount = new Int32Array(folded)
const tally = new VisitTally(true, trustProxy)
const port = parentPort!
let taken: Taken | undefined
let giving: Array<[string, Pending]> = []
let given = 0

function giveChunk(): void {
  const entries = giving.slice(given, given + CHUNK_LINKS)
  given += entries.length
  const last = given >= giving.length
  if (last) giving = []
  port.postMessage({ kind: 'chunk', entries, last, visitorsDropped: taken!.visitorsDropped } satisfies FromTally)
}

port.on('message', (m: ToTally) => {
  switch (m.kind) {
    case 'visits':
      tally.foldRaw(m.visits)
      Atomics.add(foldedCount, 0, 1)
      Atomics.notify(foldedCount, 0)
      break
    case 'take':
      taken = tally.take()
      giving = [...taken.batch]
      given = 0
      giveChunk()
      break
    case 'more':
      giveChunk()
      break
    case 'back': {
      const batch = m.batch ?? taken?.batch
      if (batch !== undefined) tally.putBack(batch)
      taken = undefined
      break
    }
  }
})
