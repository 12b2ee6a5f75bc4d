// npm ci/install runs this (package.json "postinstall"): it mends defects of the `postgres`
// driver 3.4.9 that are unfixed upstream (porsager/postgres #1066, #1154, #1208, #1119/#1181,
// #1192, #1223; PRs #1168, #1209, #1120/#1190). docs/decisions.md says what, why, and when to
// drop it. No dependency: six literal edits to each of the driver's three builds, checked so
// that a different version fails loudly.
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const MARK = 'link-service patch'
const VERSION = '3.4.9'
const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', 'postgres')

const edits = [
  {
    why: 'a deferred write after the socket closed threw where no caller could catch it; settle the query instead',
    from: '  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)\n',
    to:
      '  function nextWrite(fn) {\n' +
      `    if (socket === null) { // ${MARK}: settle with a catchable CONNECTION_CLOSED\n` +
      '      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n' +
      '      chunk = nextWriteTimer = null\n' +
      "      error(Errors.connection('CONNECTION_CLOSED', options))\n" +
      '      return false\n' +
      '    }\n' +
      '    const x = socket.write(chunk, fn)\n',
    count: 1,
  },
  {
    why: 'a query given to a connection whose socket had closed (a transaction\'s next statement or its ROLLBACK) was buffered for a socket that never came',
    from: "  function execute(q) {\n    if (terminated)\n      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))\n",
    to:
      "  function execute(q) {\n    if (terminated)\n      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))\n" +
      `    if (socket === null) // ${MARK}: closed, not yet reconnected. true: callers must not move it\n` +
      "      return queryError(q, Errors.connection('CONNECTION_CLOSED', options)), true\n",
    count: 1,
  },
  {
    why: 'terminate() and closed() cleared the write timer without resetting it, so the connection never flushed again',
    from: '\n    clearImmediate(nextWriteTimer)\n',
    to: `\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null // ${MARK}\n`,
    count: 2,
  },
  {
    why: "the array-type query a new connection sends (fetch_types) rejected with no handler when the connection was cut during it: an unhandled rejection ends the process. errored() has already failed the query that opened the connection, or the connection reconnects with it",
    from: '        return fetchArrayTypes()\n',
    to: `        return fetchArrayTypes().catch(() => {}) // ${MARK}: the opening query carries the error\n`,
    count: 1,
  },
  {
    why: "the row counter was reset only by CommandComplete: a statement that failed after sending rows (an error on a later row, or its connection terminated) left it standing, and the connection's next statement resolved with that many holes before its own rows (no row found, or a TypeError on the hole)",
    from: '    query = results = errorResponse = null\n    result = new Result()\n',
    to: `    query = results = errorResponse = null\n    result = new Result()\n    rows = 0 // ${MARK}: the next statement's rows start at 0\n`,
    count: 1,
  },
  {
    why: "a connection cut while it was still opening (during the array-type query) kept that query and its FATAL error across the reconnect: the new connection's first ReadyForQuery replayed the old error onto the opening query and opened without fetching the array types, so an array parameter was sent as text ('malformed array literal')",
    from: '    if (initial)\n      return reconnect()\n',
    to:
      `    if (initial) { // ${MARK}: the opening's own statement and error die with their socket\n` +
      '      query = errorResponse = null\n' +
      '      return reconnect()\n' +
      '    }\n',
    count: 1,
  },
]

let pkg
try {
  pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
} catch {
  process.exit(0) // not installed (e.g. an install of something else in this folder)
}
if (pkg.version !== VERSION) {
  console.error(`patch-postgres: the patch is for postgres ${VERSION}, but ${pkg.version} is installed.`)
  console.error('Check whether the new version fixes nextWrite (see docs/decisions.md), then update or drop scripts/patch-postgres.mjs.')
  process.exit(1)
}
for (const build of ['src', 'cjs/src', 'cf/src']) {
  const file = join(root, build, 'connection.js')
  let text = readFileSync(file, 'utf8')
  const before = text
  for (const edit of edits) {
    if (text.includes(edit.to)) continue // applied by an earlier run of this patch
    const found = text.split(edit.from).length - 1
    if (found !== edit.count) {
      console.error(`patch-postgres: ${build}/connection.js: expected ${edit.count} of the text to patch (${edit.why}), found ${found}`)
      process.exit(1)
    }
    text = text.split(edit.from).join(edit.to)
  }
  if (text !== before) writeFileSync(file, text)
}
console.log(`patch-postgres: postgres ${VERSION} is patched (nextWrite after close, the array-type query, the row counter, a cut while opening)`)
