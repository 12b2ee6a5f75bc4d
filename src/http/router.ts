// A small exact-match router: a Map of static paths first, then "prefix + one segment" patterns.
// It only says what matched; app.ts turns "no path" into 404 and "no method" into 405.

export type Match<T> =
  | { found: true; value: T; param: string }
  | { found: false; allow: string | null } // allow === null: no such path at all

interface Entry<T> {
  byMethod: Map<string, T>
  allow: string
}

export class Router<T> {
  readonly #static = new Map<string, Entry<T>>()
  readonly #prefixed: Array<{ prefix: string; entry: Entry<T> }> = []

  /** `path` is either static ("/api/v1/links") or ends in one parameter ("/r/:code"). */
  add(method: string, path: string, value: T): this {
    const colon = path.indexOf('/:')
    const entry = colon === -1 ? this.#staticEntry(path) : this.#prefixEntry(path.slice(0, colon + 1))
    entry.byMethod.set(method, value)
    entry.allow = allowHeader(entry.byMethod)
    return this
  }

  find(method: string, path: string): Match<T> {
    let entry = this.#static.get(path)
    let param = ''
    if (entry === undefined) {
      for (const p of this.#prefixed) {
        if (path.startsWith(p.prefix) && path.length > p.prefix.length && path.indexOf('/', p.prefix.length) === -1) {
          entry = p.entry
          param = path.slice(p.prefix.length)
          break
        }
      }
      if (entry === undefined) return { found: false, allow: null }
    }
    // RFC 9110 9.3.2: HEAD is answered by the GET handler; Node drops the body.
    const value = entry.byMethod.get(method) ?? (method === 'HEAD' ? entry.byMethod.get('GET') : undefined)
    return value === undefined ? { found: false, allow: entry.allow } : { found: true, value, param }
  }

  #staticEntry(path: string): Entry<T> {
    let entry = this.#static.get(path)
    if (entry === undefined) this.#static.set(path, (entry = { byMethod: new Map(), allow: '' }))
    return entry
  }

  #prefixEntry(prefix: string): Entry<T> {
    let found = this.#prefixed.find((p) => p.prefix === prefix)
    if (found === undefined) this.#prefixed.push((found = { prefix, entry: { byMethod: new Map(), allow: '' } }))
    return found.entry
  }
}

function allowHeader(byMethod: Map<string, unknown>): string {
  const methods = [...byMethod.keys()]
  if (methods.includes('GET') && !methods.includes('HEAD')) methods.splice(methods.indexOf('GET') + 1, 0, 'HEAD')
  return methods.join(', ')
}
