// One series of a test server's Prometheus metrics (it must run with METRICS_PORT set).
import type { TestServer } from './server.js'

/** The value of `series` (e.g. 'link_service_reports_open', or with its labels), NaN when absent. */
export async function metricValue(srv: TestServer, series: string): Promise<number> {
  const text = await (await fetch(`${srv.service.metricsUrl}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? NaN : Number(line.slice(series.length + 1))
}
