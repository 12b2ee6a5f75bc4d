// Webhook requests made on a thread of their own (send-thread.ts). Measured on the bench's two
// cores, 250 deliveries a second on the event loop cost the cached redirect about 9% of its
// throughput (docs/decisions.md): the HTTP client's work is the event loop's otherwise. The
// thread starts with the first request, and one that dies fails what it had under way (each is
// retried on the schedule, as any failed attempt) and is replaced by the next request. Like the
// KDF threads, it stops after a quiet minute: a service with no deliveries gives its memory back.
import { Worker } from 'node:worker_threads'
import type { SendResult } from './send.js'

const THREAD_URL = new URL('./send-thread.js', import.meta.url)
/** A quiet minute, as for the KDF threads */
const IDLE_MS = 60_000

export interface SendJob {
  url: string
  headers: Record<string, string>
  body: string
  /** WEBHOOK_ALLOW_PRIVATE: whether private and loopback addresses may be reached */
  allowPrivate: boolean
}

export class SendPool {
  #worker: Worker | undefined
  #nextId = 0
  readonly #waiting = new Map<number, (r: SendResult) => void>()
  #idle: NodeJS.Timeout | undefined

  /** `concurrency`: the most requests under way at once (the deliverer's own bound), the thread's connections per origin. */
  constructor(
    readonly concurrency: number,
    readonly idleMs = IDLE_MS,
  ) {}

  /** Whether the thread is running (tests, and what a quiet minute ends). */
  get running(): boolean {
    return this.#worker !== undefined
  }

  send(job: SendJob): Promise<SendResult> {
    clearTimeout(this.#idle)
    const worker = (this.#worker ??= this.#spawn())
    const id = this.#nextId++
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve)
      worker.postMessage({ id, ...job })
    })
  }

  #spawn(): Worker {
    const worker = new Worker(THREAD_URL, { workerData: { concurrency: this.concurrency } })
    worker.unref()
    worker.on('message', ({ id, result }: { id: number; result: SendResult }) => {
      const resolve = this.#waiting.get(id)
      this.#waiting.delete(id)
      resolve?.(result)
      if (this.#waiting.size === 0) this.#idle = setTimeout(() => void this.stop(), this.idleMs).unref()
    })
    worker.on('error', (err) => this.#lost(worker, `the sending thread failed: ${err.message}`))
    worker.on('exit', (code) => this.#lost(worker, `the sending thread exited with ${code}`))
    return worker
  }

  /** The thread is gone: what it had under way fails, and the next request starts another. */
  #lost(worker: Worker, why: string): void {
    if (this.#worker !== worker) return
    this.#worker = undefined
    for (const resolve of this.#waiting.values()) resolve({ error: why, durationMs: 0 })
    this.#waiting.clear()
  }

  /** Ends the thread: what is still under way fails (a stop waits for requests first). */
  async stop(): Promise<void> {
    clearTimeout(this.#idle)
    const worker = this.#worker
    if (worker === undefined) return
    this.#lost(worker, 'the sending thread was stopped')
    await worker.terminate()
  }
}
