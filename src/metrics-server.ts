// The metrics listener (METRICS_PORT, METRICS_HOST): GET /metrics in Prometheus' text format, on
// its own port so that the public port never shows it. With WORKERS > 1 the primary listens and
// sums what every worker reports over the cluster's IPC channel.
import cluster from 'node:cluster'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import client from 'prom-client'
import { methodNotAllowed, routeNotFound, type HttpError } from './http/errors.js'
import { errorReply, send } from './http/reply.js'
import type { Logger } from './log.js'

export interface MetricsServer {
  url: string
  close(): Promise<void>
}

/** In a cluster worker: answer the primary's requests for this worker's metrics. */
export function reportToPrimary(registry: client.Registry): void {
  client.AggregatorRegistry.setRegistries([registry])
  new client.AggregatorRegistry() // adds the worker's IPC listener
}

/** Serves `scrape()` at GET /metrics on host:port. */
export async function startMetricsServer(host: string, port: number, scrape: () => Promise<string>, log: Logger): Promise<MetricsServer> {
  const contentType = client.Registry.PROMETHEUS_CONTENT_TYPE
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    const refuse = (err: HttpError) => send(res, errorReply(err), {})
    if (path !== '/metrics') return refuse(routeNotFound())
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(methodNotAllowed('GET, HEAD'))
    scrape().then(
      (text) => send(res, { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' }, body: Buffer.from(text) }, {}),
      (err: unknown) => {
        log.warn('metrics scrape failed', { err })
        send(res, { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: Buffer.from('scrape failed\n') }, {})
      },
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const { address, port: bound } = server.address() as AddressInfo
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${bound}`
  log.info('metrics listening', { url: `${url}/metrics` })
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/** The primary of a cluster: scrape = every worker's metrics, summed. */
export function clusterScrape(): () => Promise<string> {
  /* c8 ignore next -- only in a cluster's primary process */
  if (!cluster.isPrimary) throw new Error('clusterScrape outside the primary')
  const aggregator = new client.AggregatorRegistry()
  return () => aggregator.clusterMetrics()
}
