// GET /api/v1/openapi.json: the OpenAPI 3.1 document of every route, kept in the repository as
// docs/openapi.json and read once at start. The tests hold it to the router and to every response.
import { existsSync, readFileSync } from 'node:fs'
import { bytes, type Reply } from './http/reply.js'

// dist/openapi.js → ../docs; build/src/openapi.js (the test build) → ../../docs
const CANDIDATES = [new URL('../docs/openapi.json', import.meta.url), new URL('../../docs/openapi.json', import.meta.url)]

/** The document's reply, ready to send: read and checked to be JSON once, here. */
export function openApiReply(): Reply {
  const file = CANDIDATES.find((url) => existsSync(url))
  if (file === undefined) throw new Error('docs/openapi.json is missing: it is served at /api/v1/openapi.json')
  const text = readFileSync(file)
  JSON.parse(text.toString('utf8'))
  return bytes(200, 'application/json; charset=utf-8', text)
}
