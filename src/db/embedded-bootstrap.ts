// The embedded engine's first start on a fresh directory, in a worker thread of its own
// (embedded.ts, bootstrapInWorker): initdb's large WASM heap ends with the thread.
import { parentPort, workerData } from 'node:worker_threads'
import { PGlite } from '@electric-sql/pglite'
import { OwnerOnlyFS } from './owner-only-fs.js'

const { dataDir } = workerData as { dataDir: string }
const pglite = await PGlite.create({ fs: new OwnerOnlyFS(dataDir) })
await pglite.close()
parentPort!.postMessage('initialised')
