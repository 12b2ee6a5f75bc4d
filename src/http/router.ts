// A small exact-match router: a Map of static paths first, then "prefix + one segment [+ suffix]"
// patterns, then "prefix + the rest" (the web app's files). It only says what matched; app.ts
// turns "no path" into 404 and "no method" into 405.

export type Match<T> =
  | { found: true; value: T; param: string; /** the path as added, "/r/:code" */ path: string }
  | { found: false; allow: string | null } // allow === null: no such path at all

interface Entry<T> {
  path: string
  byMethod: Map<string, T>
  allow: string
}

interface Pattern<T> {
  path: string
  prefix: string
  suffix: string
  entry: Entry<T>
}

/** "prefix + segment + mid + segment + tail": two parameters, handed on as "first/second". */
interface Pair<T> {
  path: string
  prefix: string
  mid: string
  tail: string
  entry: Entry<T>
}

interface Rest<T> {
  path: string
  prefix: string
  entry: Entry<T>
}

export class Router<T> {
  readonly #static = new Map<string, Entry<T>>()
  readonly #patterns: Array<Pattern<T>> = []
  readonly #pairs: Array<Pair<T>> = []
  readonly #rests: Array<Rest<T>> = []

  /**
   * `path` is static ("/api/v1/links") or has one parameter segment, last ("/r/:code") or
   * followed by a static rest ("/api/v1/links/:code/qr"), or ends in "/*name": any rest of the
   * path, slashes included, or none ("/app/*path" serves "/app/" too),
   * or has two parameter segments ("/api/v1/webhooks/:id/deliveries/:delivery/retry"; the
   * parameter is then "id/delivery").
   */
  add(method: string, path: string, value: T): this {
    const params = path.split('/:').length - 1
    const entry = path.includes('/*') ? this.#restEntry(path) : params === 2 ? this.#pairEntry(path) : params === 1 ? this.#patternEntry(path) : this.#staticEntry(path)
    entry.byMethod.set(method, value)
    entry.allow = allowHeader(entry.byMethod)
    return this
  }

  find(method: string, path: string): Match<T> {
    let entry = this.#static.get(path)
    let param = ''
    if (entry === undefined) {
      for (const p of this.#patterns) {
        const end = path.length - p.suffix.length
        if (end > p.prefix.length && path.startsWith(p.prefix) && path.endsWith(p.suffix) && path.indexOf('/', p.prefix.length) === (p.suffix === '' ? -1 : end)) {
          entry = p.entry
          param = path.slice(p.prefix.length, end)
          break
        }
      }
      for (const p of this.#pairs) {
        if (entry !== undefined) break
        if (!path.startsWith(p.prefix) || !path.endsWith(p.tail) || path.length <= p.prefix.length + p.tail.length) continue
        const middle = path.slice(p.prefix.length, path.length - p.tail.length)
        const at = middle.indexOf(p.mid)
        const [first, second] = [middle.slice(0, at), middle.slice(at + p.mid.length)]
        if (at > 0 && second !== '' && !first.includes('/') && !second.includes('/')) {
          entry = p.entry
          param = `${first}/${second}`
        }
      }
      for (const r of this.#rests) {
        if (entry !== undefined) break
        if (path.startsWith(r.prefix)) {
          entry = r.entry
          param = path.slice(r.prefix.length)
        }
      }
      if (entry === undefined) return { found: false, allow: null }
    }
    // RFC 9110 9.3.2: HEAD is answered by the GET handler; Node drops the body.
    const value = entry.byMethod.get(method) ?? (method === 'HEAD' ? entry.byMethod.get('GET') : undefined)
    return value === undefined ? { found: false, allow: entry.allow } : { found: true, value, param, path: entry.path }
  }

  /** Every method and path added, in the order added (HEAD is implied by GET). */
  routes(): Array<{ method: string; path: string }> {
    const all = [...this.#static].map(([path, entry]) => ({ path, entry }))
    all.push(...this.#patterns, ...this.#pairs, ...this.#rests)
    return all.flatMap(({ path, entry }) => [...entry.byMethod.keys()].map((method) => ({ method, path })))
  }

  #staticEntry(path: string): Entry<T> {
    let entry = this.#static.get(path)
    if (entry === undefined) this.#static.set(path, (entry = { path, byMethod: new Map(), allow: '' }))
    return entry
  }

  #restEntry(path: string): Entry<T> {
    let found = this.#rests.find((r) => r.path === path)
    if (found === undefined) this.#rests.push((found = { path, prefix: path.slice(0, path.indexOf('/*') + 1), entry: { path, byMethod: new Map(), allow: '' } }))
    return found.entry
  }

  #pairEntry(path: string): Entry<T> {
    let found = this.#pairs.find((p) => p.path === path)
    if (found === undefined) {
      const [prefix, second = '', third = ''] = path.split('/:')
      const mid = second.slice(second.indexOf('/'))
      const tail = third.includes('/') ? third.slice(third.indexOf('/')) : ''
      this.#pairs.push((found = { path, prefix: `${prefix}/`, mid: `${mid}/`, tail, entry: { path, byMethod: new Map(), allow: '' } }))
    }
    return found.entry
  }

  #patternEntry(path: string): Entry<T> {
    let found = this.#patterns.find((p) => p.path === path)
    if (found === undefined) {
      const colon = path.indexOf('/:') + 1
      const rest = path.indexOf('/', colon)
      const suffix = rest === -1 ? '' : path.slice(rest)
      this.#patterns.push((found = { path, prefix: path.slice(0, colon), suffix, entry: { path, byMethod: new Map(), allow: '' } }))
    }
    return found.entry
  }
}

function allowHeader(byMethod: Map<string, unknown>): string {
  const methods = [...byMethod.keys()]
  if (methods.includes('GET') && !methods.includes('HEAD')) methods.splice(methods.indexOf('GET') + 1, 0, 'HEAD')
  return methods.join(', ')
}
