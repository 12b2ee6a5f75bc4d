// CSV replies (RFC 4180): CRLF line ends, a header row, and a field quoted when it holds a comma, a
// quote or a line break (quotes doubled). A text cell that a spreadsheet would read as a formula
// (it starts with =, +, -, @, a tab or a carriage return: OWASP, "CSV Injection") gets a leading
// apostrophe, so it shows as the text it is. Numbers are written as numbers.
import { bytes, type Reply } from './reply.js'

export type Cell = string | number | null

const FORMULA = /^[=+\-@\t\r]/
const QUOTE = /[",\r\n]/

export function csvCell(cell: Cell): string {
  if (cell === null) return ''
  if (typeof cell === 'number') return String(cell)
  const text = FORMULA.test(cell) ? `'${cell}` : cell
  return QUOTE.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export const toCsv = (rows: ReadonlyArray<readonly Cell[]>): string => rows.map((r) => r.map(csvCell).join(',') + '\r\n').join('')

/** A CSV download named `filename` (letters, digits, dots and dashes only). */
export const csv = (rows: ReadonlyArray<readonly Cell[]>, filename: string): Reply =>
  bytes(200, 'text/csv; charset=utf-8; header=present', Buffer.from(toCsv(rows)), {
    'content-disposition': `attachment; filename="${filename}"`,
  })

/** `?format=csv`, or an Accept header that asks for text/csv: the client wants CSV. */
export function wantsCsv(format: 'json' | 'csv' | undefined, accept: string | undefined): boolean {
  if (format !== undefined) return format === 'csv'
  return accept !== undefined && /(^|,)\s*text\/csv\s*(;|,|$)/i.test(accept)
}
