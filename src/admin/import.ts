// Reads an export stream (transfer-format.ts) into an empty database, in one transaction: bad
// input of any kind (not an export, another version or schema, rows out of order, a missing or
// wrong trailer or digest, a row the API would refuse) rolls everything back and leaves the
// database as it was.
import { createHash, type Hash } from 'node:crypto'
import type { Sql, Tx } from '../db/types.js'
import type { Argon2Params } from '../passwords/phc.js'
import { checkRow } from './import-rows.js'
import { FORMAT, MAX_LINE_BYTES, presentTables, schemaVersion, TransferError, VERSION, type Table } from './transfer-format.js'

const BATCH_ROWS = 500
const BATCH_CHARS = 4 * 1024 * 1024

export interface ImportOptions {
  /** the configured cost: no imported password hash may ask more */
  argon2: Readonly<Argon2Params>
  /** false: a missing or different digest is let through (import --no-verify); rows are checked all the same */
  verify: boolean
}

/**
 * `produce` feeds the stream's lines (without newlines) to `line`, awaiting each; the import
 * commits when it resolves and the stream was whole. Returns the rows per table.
 */
/** The one table an import may find rows in: nothing made with them is in an empty database. */
const REPLACED = 'experiment_secret'

export async function importDatabase(
  sql: Sql,
  options: ImportOptions,
  produce: (line: (text: string) => Promise<void>) => Promise<void>,
): Promise<Record<string, number>> {
  return sql.begin(async (tx) => {
    // Reading the input may be slow (a pipe from another machine): the transaction waits for it.
    await tx`set local idle_in_transaction_session_timeout = 0`
    const tables = await presentTables(tx)
    // Nothing may be written into these tables until we commit: the emptiness checked stays true.
    for (const t of tables) await tx`lock table ${tx(t.name)} in exclusive mode`
    for (const t of tables) {
      if (t.name === REPLACED) continue
      const [row]: [{ n: number }?] = await tx`select count(*)::int as n from (select from ${tx(t.name)} limit 1) x`
      if (row!.n > 0) throw new TransferError(`the database is not empty (table ${t.name} has rows): import only into an empty database`)
    }
    // A service started on the empty database made its own experiment secret; the export's replaces it.
    if (tables.some((t) => t.name === REPLACED)) await tx`delete from experiment_secret`
    const reader = new StreamReader(tx, tables, await schemaVersion(tx), options)
    await produce((text) => reader.line(text))
    return reader.finish()
  })
}

class StreamReader {
  private lineNo = 0
  private header = false
  private trailer: Record<string, unknown> | undefined
  /** index in `tables` of the table being read: tables come in order, each one once */
  private current = -1
  private batch: string[] = []
  private batchChars = 0
  private readonly counts: Record<string, number> = {}
  /** of every line before the trailer, each with its newline (export.ts) */
  private readonly digest: Hash = createHash('sha256')

  constructor(
    private readonly tx: Tx,
    private readonly tables: Table[],
    private readonly schema: number,
    private readonly options: ImportOptions,
  ) {}

  async line(text: string): Promise<void> {
    this.lineNo++
    const value = this.parse(text)
    if (this.trailer !== undefined) throw this.error('a line after the last one (the row counts)')
    if ('counts' in value && this.header) {
      this.checkDigest(value.sha256)
      await this.flush()
      this.trailer = value
      return
    }
    this.digest.update(text + '\n')
    if (!this.header) return this.readHeader(value)
    const { table, row } = value
    if (typeof table !== 'string') throw this.error('not a row: "table" is not a string')
    const index = this.tables.findIndex((t) => t.name === table)
    if (index === -1) throw this.error(`no table ${JSON.stringify(table)} in this database`)
    if (typeof row !== 'object' || row === null || Array.isArray(row)) throw this.error('"row" is not a JSON object')
    if (index < this.current) throw this.error(`rows of ${table} after those of ${this.tables[this.current]!.name}: not the export's order`)
    if (index !== this.current) await this.flush()
    let derived
    try {
      derived = checkRow(table, row as Record<string, unknown>, this.options.argon2)
    } catch (err) {
      throw this.error(`${table} row: ${(err as Error).message}`)
    }
    this.current = index
    this.counts[this.tables[index]!.name] = (this.counts[this.tables[index]!.name] ?? 0) + 1
    // The line itself goes to PostgreSQL, not the parsed value: JSON.parse would round a bigint.
    // What the import computes itself rides beside it: [line, columns to set, a link's host, its rule targets' hosts].
    const element = derived === undefined ? `[${text}]` : `[${text},${JSON.stringify(derived.set)},${JSON.stringify(derived.host ?? null)},${JSON.stringify(derived.ruleHosts ?? [])}]`
    this.batch.push(element)
    this.batchChars += element.length
    if (this.batch.length >= BATCH_ROWS || this.batchChars >= BATCH_CHARS) await this.flush()
  }

  async finish(): Promise<Record<string, number>> {
    if (!this.header) throw new TransferError('the input is empty: not a link-service export')
    if (this.trailer === undefined) throw new TransferError(`the input ends at line ${this.lineNo} without its last line (the row counts): truncated?`)
    const expected = this.trailer.counts
    if (typeof expected !== 'object' || expected === null) throw new TransferError('the last line\'s "counts" is not an object')
    // Every table exported is named, with 0 when it had no rows.
    const counts: Record<string, number> = {}
    for (const name of new Set([...Object.keys(expected), ...Object.keys(this.counts)])) {
      const want = (expected as Record<string, unknown>)[name]
      const got = this.counts[name] ?? 0
      if (want !== got) throw new TransferError(`the export says ${String(want ?? 0)} rows of ${name}, the input has ${got}: damaged or truncated`)
      counts[name] = got
    }
    // Imported links and reports keep their ids: new ones must be numbered after them.
    await this.tx`select setval(pg_get_serial_sequence('links', 'id'), coalesce(max(id), 0) + 1, false) from links`
    if (this.tables.some((t) => t.name === 'reports')) {
      await this.tx`select setval(pg_get_serial_sequence('reports', 'id'), coalesce(max(id), 0) + 1, false) from reports`
    }
    return counts
  }

  private checkDigest(written: unknown): void {
    if (!this.options.verify) return
    const override = 'import --no-verify takes it as it is; every row is still checked'
    if (typeof written !== 'string') throw this.error(`the last line has no digest ("sha256"): not an export of this release? (${override})`)
    if (written !== this.digest.digest('hex')) {
      throw this.error(`the lines differ from the digest in the last line: the export was changed or damaged since it was written (${override})`)
    }
  }

  private parse(text: string): Record<string, unknown> {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      throw this.error(this.header ? 'not JSON' : 'not JSON: not a link-service export')
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw this.error('not a JSON object')
    return value as Record<string, unknown>
  }

  private readHeader(value: Record<string, unknown>): void {
    if (value.format !== FORMAT) throw this.error('not a link-service export (no header)')
    if (value.version !== VERSION) throw this.error(`export format version ${String(value.version)}; this release reads version ${VERSION}`)
    if (value.schema !== this.schema) {
      throw this.error(`the export is of schema ${String(value.schema)}, this database is at ${this.schema}: import with the release that exported it`)
    }
    this.header = true
  }

  /** One statement per batch: PostgreSQL builds each row from its JSON (jsonb_populate_record). */
  private async flush(): Promise<void> {
    if (this.batch.length === 0) return
    const table = this.tables[this.current]!.name
    const lines = '[' + this.batch.join(',') + ']'
    this.batch = []
    this.batchChars = 0
    const { tx } = this
    // "overriding system value": links.id is an identity column, and its values move as they are.
    // A link's host_domains and rule_domains come from its hosts as the API's writes make them
    // (domains_of, 0007; rule_domains_of, 0017).
    await tx`insert into ${tx(table)} overriding system value
      select r.* from jsonb_array_elements(${lines}::text::jsonb) as e,
        jsonb_populate_record(null::${tx(table)}, (e -> 0 -> 'row') || coalesce(e -> 1, '{}')
          || case when e ->> 2 is null then '{}' else jsonb_build_object('host_domains', domains_of(e ->> 2)) end
          || case when e -> 3 is null then '{}' else jsonb_build_object('rule_domains', rule_domains_of(array(select jsonb_array_elements_text(e -> 3)))) end) as r`
  }

  private error(reason: string): TransferError {
    return new TransferError(`line ${this.lineNo}: ${reason}`)
  }
}

/**
 * The lines of an export stream (without newline or CR) to `line`, in order. A line longer than
 * MAX_LINE_BYTES is refused as soon as its bytes pass the bound, never gathered whole.
 */
export async function readExportLines(input: AsyncIterable<Buffer | string>, line: (text: string) => Promise<void>): Promise<void> {
  let parts: Buffer[] = []
  let size = 0
  let lineNo = 1
  const add = (part: Buffer) => {
    parts.push(part)
    size += part.length
    if (size > MAX_LINE_BYTES) throw new TransferError(`line ${lineNo}: longer than ${MAX_LINE_BYTES} bytes, which no row of an export is`)
  }
  const take = () => {
    const text = Buffer.concat(parts, size).toString('utf8')
    parts = []
    size = 0
    lineNo++
    return text.endsWith('\r') ? text.slice(0, -1) : text
  }
  for await (const piece of input) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece
    let start = 0
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      add(chunk.subarray(start, nl))
      start = nl + 1
      await line(take())
    }
    if (start < chunk.length) add(chunk.subarray(start))
  }
  if (size > 0) await line(take())
}
