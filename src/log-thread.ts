// The log sink's thread (log-sink.ts): writes each batch of log lines it is sent to its file
// descriptor, whole, and counts it done in the shared `written` counter. A write(2) that blocks
// (a full pipe, journald behind, a disk throttling dirty pages) blocks this thread, never the
// one that answers requests.
import { parentPort, workerData } from 'node:worker_threads'
import { writeAll } from './log-sink.js'

const { fd, written } = workerData as { fd: number; written: SharedArrayBuffer }
const done = new Int32Array(written)
// Once nobody reads the log any more (EPIPE...), what comes is dropped.
let broken = false

parentPort!.on('message', (text: string) => {
  if (!broken) broken = !writeAll(fd, text)
  Atomics.add(done, 0, 1)
  Atomics.notify(done, 0)
})
