// Where the service's log lines go: stdout, written by a thread of its own (log-thread.ts). The
// logger hands it a turn's lines at a time; they are passed on to the thread together, every
// POST_MS or POST_BYTES (a message per turn cost the answering thread as much as the write it
// saved), and kept here until the thread has written them, so that nothing is lost at an exit: a
// stop waits for the thread (close), and any exit writes what the thread has not yet done itself.
// Only when the thread is MAX_BEHIND_BYTES behind (its sink stalled for a long time) does the
// next batch wait for it, as every write did before.
import { writeSync } from 'node:fs'
import { Worker } from 'node:worker_threads'

const MAX_BEHIND_BYTES = 32 * 1024 * 1024
const POST_MS = 10
const POST_BYTES = 64 * 1024
const THREAD_URL = new URL('./log-thread.js', import.meta.url)

const nap = new Int32Array(new SharedArrayBuffer(4))

/**
 * Writes all of `text` to `fd`, waiting for room when the descriptor is non-blocking (a pipe may
 * be). False when the descriptor refuses it otherwise (nobody reads it any more: EPIPE...).
 */
export function writeAll(fd: number, text: string): boolean {
  let buf = Buffer.from(text)
  while (buf.length > 0) {
    try {
      buf = buf.subarray(writeSync(fd, buf))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return false
      Atomics.wait(nap, 0, 0, 5)
    }
  }
  return true
}

export interface LogSink {
  write(text: string): void
  /** Resolves once every batch handed over is written. */
  close(): Promise<void>
}

export function threadSink(fd = 1): LogSink {
  const written = new SharedArrayBuffer(4)
  const done = new Int32Array(written)
  const worker = new Worker(THREAD_URL, { workerData: { fd, written } })
  worker.unref()
  /** batches sent and not yet written, oldest first; `first` is the number of the oldest */
  const sent: string[] = []
  let first = 0
  let behind = 0
  /** lines not yet passed on */
  let held = ''
  let timer: NodeJS.Timeout | undefined
  const forget = () => {
    const upTo = Atomics.load(done, 0)
    while (first < upTo) {
      behind -= sent.shift()!.length
      first++
    }
  }
  // Whatever the thread has not written yet, written here (a duplicate of the batch it was on is
  // possible only when the process ends without close).
  const writeRest = () => {
    forget()
    for (const text of sent) writeAll(fd, text)
    sent.length = 0
    writeAll(fd, held)
    held = ''
  }
  process.once('exit', writeRest)
  let failed = false
  worker.once('error', () => {
    failed = true
  })
  const post = () => {
    clearTimeout(timer)
    timer = undefined
    if (held === '') return
    const text = held
    held = ''
    if (failed) return void writeAll(fd, text)
    forget()
    while (behind > MAX_BEHIND_BYTES) {
      Atomics.wait(done, 0, first)
      forget()
    }
    sent.push(text)
    behind += text.length
    worker.postMessage(text)
  }
  return {
    write(text) {
      held += text
      if (held.length >= POST_BYTES) post()
      else timer ??= setTimeout(post, POST_MS).unref()
    },
    async close() {
      post()
      process.removeListener('exit', writeRest)
      while (!failed && (forget(), sent.length > 0)) await new Promise((r) => setTimeout(r, 5))
      if (failed) writeRest()
      await worker.terminate()
    },
  }
}
