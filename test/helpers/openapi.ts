// The OpenAPI document (docs/openapi.json) as a check on every response a test receives: `call`
// (api.ts) runs each one through checkResponse, so a status, header or body the document does not
// describe fails the test that met it. JSON Schema 2020-12 by Ajv, formats by ajv-formats.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'

export const OPENAPI_FILE = resolve('docs/openapi.json')
export const openApi = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'))

// ajv-formats is CommonJS: its default export arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void
const ajv = new Ajv2020({ strict: true, allErrors: true })
addFormats(ajv)
// The document's own keywords hold no schemas: Ajv is told to ignore them, and compiles only what
// a reference points at.
ajv.addVocabulary(['openapi', 'info', 'servers', 'tags', 'paths', 'components', 'webhooks', 'security', 'externalDocs'])
ajv.addSchema(openApi, 'openapi')

const validators = new Map<string, ValidateFunction>()
function validatorAt(pointer: string): ValidateFunction {
  let v = validators.get(pointer)
  if (v === undefined) validators.set(pointer, (v = ajv.compile({ $ref: `openapi#${pointer}` })))
  return v
}

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1')
const deref = (node: any): { node: any; pointer: string | undefined } => {
  if (node?.$ref === undefined) return { node, pointer: undefined }
  const pointer = (node.$ref as string).slice(1)
  return { node: pointer.split('/').slice(1).reduce((n: any, p: string) => n[p.replace(/~1/g, '/').replace(/~0/g, '~')], openApi), pointer }
}

/** The document's path template for a request path, or undefined. `{path}` (the web app's) spans slashes, or is empty. */
export function templateOf(path: string): string | undefined {
  if (openApi.paths[path] !== undefined) return path
  return Object.keys(openApi.paths).find((t) => {
    if (!t.includes('{')) return false
    const re = new RegExp(`^${t.replace(/\./g, '\\.').replace(/\{path\}/g, '.*').replace(/\{[^}]+\}/g, '[^/]+')}$`)
    return re.test(path)
  })
}

export interface Received {
  status: number
  headers: Headers
  text: string
  body: unknown
}

/**
 * Throws unless the response is one the document describes for this request: its status among
 * the operation's responses (404/405 for paths or methods it lacks), every required header
 * present and valid, and the body of the documented media type and schema.
 */
export function checkResponse(method: string, target: string, requestHeaders: Record<string, string>, res: Received): void {
  const path = target.split('?', 1)[0]!
  const where = `${method} ${path} → ${res.status}`
  // A CORS preflight is answered on any path (the document says so in info.description).
  if (method === 'OPTIONS' && Object.keys(requestHeaders).some((h) => h.toLowerCase() === 'access-control-request-method')) {
    if (res.status !== 204) fail(where, 'a preflight is answered 204')
    return
  }
  const template = templateOf(path)
  const operation = template === undefined ? undefined : openApi.paths[template][method === 'HEAD' ? 'get' : method.toLowerCase()]
  let pointer: string
  if (template === undefined) pointer = '/components/responses/RouteNotFound'
  else if (operation === undefined) pointer = '/components/responses/MethodNotAllowed'
  else pointer = `/paths/${escape(template)}/${method === 'HEAD' ? 'get' : method.toLowerCase()}/responses/${res.status}`
  let { node: response, pointer: refPointer } = deref(pointerGet(pointer))
  if (response === undefined) fail(where, `status ${res.status} is not documented for this operation`)
  if (refPointer !== undefined) pointer = refPointer
  const expectStatus = pointer.endsWith('RouteNotFound') ? 404 : pointer.endsWith('MethodNotAllowed') ? 405 : res.status
  if (res.status !== expectStatus) fail(where, `expected ${expectStatus} (${pointer})`)
  for (const [name, h] of Object.entries(response.headers ?? {})) {
    const { node: header, pointer: hp } = deref(h)
    const value = res.headers.get(name)
    if (value === null) {
      if (header.required) fail(where, `required header ${name} is missing`)
      continue
    }
    const schemaPointer = `${hp ?? `${pointer}/headers/${escape(name)}`}/schema`
    const v = validatorAt(schemaPointer)
    const typed = /^-?\d+$/.test(value) && !v(value) ? Number(value) : value
    if (!v(typed)) fail(where, `header ${name}: ${value}: ${ajv.errorsText(v.errors)}`)
  }
  const contentType = (res.headers.get('content-type') ?? '').split(';', 1)[0]!.trim()
  if (response.content === undefined) {
    if (res.text !== '') fail(where, 'documented without a body, but has one')
    return
  }
  if (response.content[contentType] === undefined) fail(where, `content type ${contentType || '(none)'} is not documented`)
  if (method === 'HEAD') return
  const v = validatorAt(`${pointer}/content/${escape(contentType)}/schema`)
  const value = contentType === 'application/json' ? res.body : res.text
  if (!v(value)) fail(where, `body does not match the document: ${ajv.errorsText(v.errors)}\n${res.text.slice(0, 500)}`)
}

function pointerGet(pointer: string): any {
  return pointer.split('/').slice(1).reduce((n: any, p: string) => n?.[p.replace(/~1/g, '/').replace(/~0/g, '~')], openApi)
}

function fail(where: string, why: string): never {
  throw new Error(`OpenAPI (docs/openapi.json): ${where}: ${why}`)
}
