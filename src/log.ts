// JSON log lines on stdout. Lines are gathered and handed on once per event-loop turn, so a busy
// redirect path pays for one write per batch, not per request; the service's writer is a thread
// of its own (log-sink.ts). Never pass secrets in fields.
import type { LogLevel } from './config.js'

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }
const FLUSH_BYTES = 64 * 1024

export type LogFields = Record<string, unknown>

export interface Logger {
  /** whether `access` writes anything at this level (it logs at info) */
  readonly writesAccess: boolean
  /** The access-log line of one request (contract §8); built without an intermediate object. */
  access(method: string, path: string, status: number, durationMs: number, requestId: string): void
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
  flush(): void
}

export function createLogger(level: LogLevel, write: (text: string) => void = (t) => process.stdout.write(t)): Logger {
  let pending = ''
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending === '') return
    const text = pending
    pending = ''
    write(text)
  }
  const append = (line: string) => {
    pending += line
    if (pending.length >= FLUSH_BYTES) flush()
    else if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
  const emit = (lvl: LogLevel, msg: string, fields?: LogFields) => {
    if (RANK[lvl] < RANK[level]) return
    append(JSON.stringify({ time: isoNow(), level: lvl, msg, pid: process.pid, ...fields }, errorsAsText) + '\n')
  }
  const accessOn = RANK.info >= RANK[level]
  const pid = process.pid
  return {
    writesAccess: accessOn,
    access: (method, path, status, durationMs, requestId) => {
      if (!accessOn) return
      append(
        `{"time":"${isoNow()}","level":"info","msg":"request","pid":${pid},"method":${jsonString(method)},` +
          `"path":${jsonString(path)},"status":${status},"duration_ms":${durationMs},"request_id":${jsonString(requestId)}}\n`,
      )
    },
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    flush,
  }
}

// One Date and toISOString per millisecond, however many lines that millisecond logs.
let lastMs = 0
let lastIso = ''
function isoNow(): string {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastMs = ms
    lastIso = new Date(ms).toISOString()
  }
  return lastIso
}

// Printable ASCII without " and \ needs no escaping; a regex test is a third of JSON.stringify's cost.
const NEEDS_NO_ESCAPE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/
const jsonString = (s: string) => (NEEDS_NO_ESCAPE.test(s) ? `"${s}"` : JSON.stringify(s))

/** Fields as plain data (errors as their text), to be sent to another thread and logged there. */
export function plainFields(fields: LogFields | undefined): LogFields | undefined {
  return fields === undefined ? undefined : (JSON.parse(JSON.stringify(fields, errorsAsText)) as LogFields)
}

function errorsAsText(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value
}
