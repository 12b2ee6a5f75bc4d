// The tally thread (tally-thread.ts): folds the raw visits it is sent into a VisitTally, and
// answers a take with the batch in chunks, the next chunk when it is asked for. It keeps the batch
// it last gave until the next take, for a `back` (a flush that surely failed). The country
// database is opened here: only this thread looks addresses up for the statistics; and a take
// that brings its days' salts gets the visitors hashed here, as sketch registers.
import { parentPort, workerData } from 'node:worker_threads'
import { plainFields } from '../log.js'
import { openCountries } from './geo.js'
import { CHUNK_LINKS, type FromTally, type TallyData, type ToTally } from './tally-thread.js'
import { VisitTally, type Pending, type Taken } from './visit-tally.js'

const { trustProxy, geoDb, folded } = workerData as TallyData
const foldedCount = new Int32Array(folded)
const port = parentPort!
// Messages wait in the port until its listener is on (below): none is missed meanwhile.
const countryOf = await openCountries(geoDb, { warn: (msg, fields) => port.postMessage({ kind: 'warn', msg, fields: plainFields(fields) } satisfies FromTally) })
const tally = new VisitTally(true, trustProxy, countryOf)
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
      taken = tally.take(m.salts)
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
