// GET /api/v1/openapi.json: the document kept in the repository, served as is, with
// the headers of every API response.
import { readFileSync } from 'node:fs'
import * as assert from 'uvu/assert'
import { call } from '../helpers/api.js'
import { OPENAPI_FILE } from '../helpers/openapi.js'
import { serverSuite } from '../helpers/server.js'

const test = serverSuite('GET /api/v1/openapi.json')

test('serves docs/openapi.json byte for byte, as JSON, without a token', async ({ srv }) => {
  const res = await call(srv.url, 'GET', '/api/v1/openapi.json', { headers: { 'x-request-id': 'doc-1' } })
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), 'application/json; charset=utf-8')
  assert.is(res.text, readFileSync(OPENAPI_FILE, 'utf8'))
  assert.is(res.headers.get('x-request-id'), 'doc-1')
  assert.is(res.body.openapi, '3.1.0')
  const cors = await call(srv.url, 'GET', '/api/v1/openapi.json', { headers: { origin: 'https://app.example' } })
  assert.is(cors.headers.get('access-control-allow-origin'), '*')
  const head = await call(srv.url, 'HEAD', '/api/v1/openapi.json')
  assert.equal([head.status, head.text, head.headers.get('content-length')], [200, '', res.headers.get('content-length')])
})

// A new client can discover every endpoint from /api/v1/openapi.json alone
test('a client that knows only the document finds every endpoint: each documented GET without parameters answers as documented', async ({ srv }) => {
  const doc = (await call(srv.url, 'GET', '/api/v1/openapi.json')).body
  const paths = Object.keys(doc.paths)
  for (const p of ['/api/v1/links/{code}/stats', '/api/v1/links/{code}/qr', '/api/v1/auth/sessions', '/api/v1/auth/sessions/{id}', '/r/{code}']) assert.ok(paths.includes(p), p)
  for (const path of paths.filter((p) => !p.includes('{') && doc.paths[p].get)) {
    const res = await call(srv.url, 'GET', path) // checked against the document by call()
    const documented = Object.keys(doc.paths[path].get.responses).map(Number)
    assert.ok(documented.includes(res.status), `${path}: ${res.status}`)
  }
})

test.run()
