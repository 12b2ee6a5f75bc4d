// A cluster of its own for the tests of replicas, the pooler and failover: scripts/cluster.mjs
// (primary, synchronous standby, read replica, PgBouncer; service nodes and HAProxy on request),
// in a fresh folder, on TEST_CLUSTER_PORT and the 20 ports after it (by default one of 21400,
// 21420 ... 22180, picked by process id, so that two test runs on one machine do not collide).
// Below Linux's ephemeral range (32768-60999): a port there may be taken, when the cluster
// starts, by any test's server on port 0 or a client connection's own end, and PostgreSQL then
// cannot bind it. Whatever happens, the test process takes it down when it exits.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface ClusterState {
  port: number
  dir: string
  urls: { primary: string; standby: string; replica: string; pooler: string; failover: string; balancer?: string; nodes: string[] }
}

interface ClusterScript {
  up(opts: { port: number; dir: string; nodes?: number; server?: string; nodeEnv?: Record<string, string> }): Promise<ClusterState>
  down(dir: string): void
  stopPrimary(state: ClusterState): void
  promoteStandby(state: ClusterState): Promise<void>
  pauseReplica(state: ClusterState, paused: boolean): void
  stopStandby(state: ClusterState, stopped: boolean): void
}

const SCRIPT = new URL('../../../scripts/cluster.mjs', import.meta.url).href
const DRILL = new URL('../../../scripts/failover-drill.mjs', import.meta.url).href

export interface DrillReport {
  stats: Map<string, { creates: Record<string, number>; redirects: Record<string, number> }>
  acknowledged: number
  lost: number
  writesBackMs: number | undefined
  downtimeMs: number | undefined
  slowestMs: number
  redirectFailures: number
  feeds: string[]
  changeCarried: boolean
}

/** scripts/failover-drill.mjs: kills the primary under writes, promotes the standby, reports. */
export async function failoverDrill(opts: { nodes: string[]; kill(): void; promote(): Promise<void>; newPrimaryUrl: string; clients?: number; promoteAfterMs?: number; afterMs?: number }): Promise<DrillReport> {
  const drill = (await import(DRILL)) as { failoverDrill(o: typeof opts): Promise<DrillReport> }
  return drill.failoverDrill(opts)
}
/** The test build's entry, for the nodes the cluster spawns. */
export const TEST_SERVER = new URL('../../src/server.js', import.meta.url).pathname

/** Why a cluster cannot be started here (no PostgreSQL binaries, PgBouncer or HAProxy), or undefined. */
export function clusterUnavailable(): string | undefined {
  const missing = ['/usr/lib/postgresql/15/bin/initdb', '/usr/sbin/pgbouncer', '/usr/sbin/haproxy'].filter((f) => !existsSync(f))
  let why = missing.length > 0 ? `not installed: ${missing.join(', ')} (apt-get install postgresql-15 pgbouncer haproxy)` : undefined
  if (why === undefined && process.getuid?.() === 0) {
    try {
      execFileSync('id', ['postgres'], { stdio: 'ignore' })
    } catch {
      why = 'no postgres user to run PostgreSQL as'
    }
  }
  if (why !== undefined && process.env.REQUIRE_CLUSTER === '1') throw new Error(`REQUIRE_CLUSTER=1 but ${why}`)
  return why
}

export async function startCluster(opts: { nodes?: number; nodeEnv?: Record<string, string> } = {}): Promise<{ state: ClusterState; script: ClusterScript; stop(): Promise<void> }> {
  const script = (await import(SCRIPT)) as ClusterScript
  const dir = mkdtempSync(join(tmpdir(), 'link-service-cluster-'))
  let stopped = false
  const stop = async () => {
    if (!stopped) script.down(dir)
    stopped = true
  }
  // down() is synchronous: on exit (a test that threw, say) it runs to the end all the same.
  process.once('exit', () => void stop())
  const first = Number(process.env.TEST_CLUSTER_PORT ?? 21400 + (process.pid % 40) * 20)
  // A port taken all the same (another run's cluster, some other program): the next 20, twice at most.
  for (let attempt = 0; ; attempt++) {
    try {
      const state = await script.up({ port: first + attempt * 20, dir, server: TEST_SERVER, ...opts })
      return { state, script, stop }
    } catch (err) {
      if (attempt === 2 || !/could not bind|already in use/i.test(String((err as Error).message))) throw err
    }
  }
}
