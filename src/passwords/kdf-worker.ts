// A worker thread of the KDF pool (kdf-pool.ts): derives one key per message, so a hash never
// runs on the event loop. On Linux it lowers its own scheduling priority first, so that when the
// cores are busy hashing, the event loop (redirects, every other request) still runs at once.
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort } from 'node:worker_threads'
import { derive, type KdfJob } from './derive.js'

const WORKER_NICE = 10

try {
  // /proc/thread-self → "<pid>/task/<tid>"; setpriority(2) on a thread id changes that thread only.
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
  setPriority(tid, WORKER_NICE)
} catch {
  // not Linux, or not allowed: the pool's size alone leaves the event loop its room
}

parentPort!.on('message', ({ id, job }: { id: number; job: KdfJob }) => {
  const started = performance.now()
  try {
    const key = derive(job)
    parentPort!.postMessage({ id, key, ms: performance.now() - started })
  } catch (err) {
    parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) })
  }
})
