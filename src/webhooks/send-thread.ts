// The thread that makes webhook requests (send-pool.ts): the HTTP client, its connections and
// their timers run here, so a busy stream of deliveries takes no time from the event loop that
// answers redirects. One message per request; the answer says how it went.
import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { parentPort, workerData } from 'node:worker_threads'
import { postWebhook } from './send.js'
import type { SendJob } from './send-pool.js'

const { concurrency } = workerData as { concurrency: number }
// Connections kept alive between deliveries: a busy endpoint is not a new TCP (and TLS) handshake per event.
const options = { keepAlive: true, maxSockets: concurrency, timeout: 30_000 }
const agents = { http: new HttpAgent(options), https: new HttpsAgent(options) }

parentPort!.on('message', ({ id, url, headers, body, allowPrivate }: SendJob & { id: number }) => {
  void postWebhook(new URL(url), headers, body, allowPrivate, agents).then((result) => parentPort!.postMessage({ id, result }))
})
