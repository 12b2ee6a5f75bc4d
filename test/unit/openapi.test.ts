// The OpenAPI document describes every route the router serves, and nothing else; its
// references resolve and every operation documents X-Request-Id. (That every response matches it
// is checked in test/helpers/api.ts, on every call of every HTTP test.)
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import type { Deps } from '../../src/context.js'
import { createLogger } from '../../src/log.js'
import { checkResponse, openApi } from '../helpers/openapi.js'

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

function routerRoutes(): string[] {
  const deps = { config: loadConfig({}), log: createLogger('error', () => {}) } as unknown as Deps
  return createApp(deps).routes.map((r) => `${r.method} ${r.path.replace(/[:*]([a-z]+)/g, '{$1}')}`).sort()
}

function documentRoutes(): string[] {
  return Object.entries(openApi.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, item]) => Object.keys(item).filter((k) => METHODS.includes(k)).map((m) => `${m.toUpperCase()} ${path}`))
    .sort()
}

// A test fails when the router has a route that the document lacks or the other way round
test('the router and docs/openapi.json list the same routes', () => {
  assert.equal(documentRoutes(), routerRoutes())
})

test('the comparison would notice a route missing from either side', () => {
  const routes = routerRoutes()
  assert.ok(routes.length >= 20, routes.join(', '))
  assert.ok(routes.includes('GET /api/v1/links/{code}/stats'))
  assert.not.equal(documentRoutes(), routes.slice(1))
})

test('every $ref resolves, operationIds are unique, every response documents X-Request-Id', () => {
  const refs: string[] = []
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk)
    else if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') refs.push(v)
        else walk(v)
      }
    }
  }
  walk(openApi)
  for (const ref of refs) {
    const target = ref.slice(2).split('/').reduce((n: any, p) => n?.[p], openApi)
    assert.ok(target !== undefined, `${ref} resolves`)
  }
  const ids: string[] = []
  for (const item of Object.values(openApi.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue
      ids.push(op.operationId)
      for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
        const response = r.$ref ? r.$ref.slice(2).split('/').reduce((n: any, p: string) => n[p], openApi) : r
        assert.ok(response.headers?.['X-Request-Id'], `${op.operationId} ${status} has X-Request-Id`)
      }
    }
  }
  assert.is(new Set(ids).size, ids.length)
})

test('the response check refuses what the document does not describe', () => {
  const headers = new Headers({ 'x-request-id': 'r1', 'content-type': 'application/json; charset=utf-8' })
  const link = { code: 'aZ3kP9qR', url: 'https://e.x/', short_url: 'https://sho.rt/r/aZ3kP9qR', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', visits: 0, last_visited_at: null, expires_at: null, disabled: false, starts_at: null, max_visits: null, visits_left: null, password_protected: false, tags: [], title: null, description: null, image_url: null, rules: [], health: { status: 'unchecked', checked_at: null, http_status: null, final_url: null, detail: null }, variants: [], conversions: false, promote_winner: false }
  const ok = { status: 200, headers, text: JSON.stringify(link), body: link }
  checkResponse('GET', '/api/v1/links/aZ3kP9qR', {}, ok)
  assert.throws(() => checkResponse('GET', '/api/v1/links/aZ3kP9qR', {}, { ...ok, body: { ...link, extra: 1 } }), /body does not match/)
  assert.throws(() => checkResponse('GET', '/api/v1/links/aZ3kP9qR', {}, { ...ok, status: 409 }), /not documented/)
  assert.throws(() => checkResponse('GET', '/api/v1/links', {}, { ...ok, headers: new Headers({ 'content-type': 'application/json' }) }), /X-Request-Id is missing/)
  const error = { code: 'METHOD_NOT_ALLOWED', message: 'no' }
  assert.throws(() => checkResponse('PUT', '/api/v1/links', {}, { status: 405, headers, text: '{}', body: error }), /Allow is missing/)
  assert.throws(() => checkResponse('GET', '/nowhere', {}, { status: 200, headers, text: '{}', body: {} }), /expected 404/)
})

test.run()
