// A worker thread of the KDF pool (kdf-pool.ts): derives one key per message, so a hash never
// runs on the event loop.
import { parentPort } from 'node:worker_threads'
import { derive, type KdfJob } from './derive.js'

parentPort!.on('message', ({ id, job }: { id: number; job: KdfJob }) => {
  const started = performance.now()
  try {
    const key = derive(job)
    parentPort!.postMessage({ id, key, ms: performance.now() - started })
  } catch (err) {
    parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) })
  }
})
