// Builds the web app (webapp/) into OUT (default dist/app): tsc compiles it to ES modules, and each
// module, the stylesheet and the icon get their content's hash in their names, so they can be
// cached for a year (static-files.ts); index.html names them and is the one file never cached.
// Each language's words (the "app" section of locales/{tag}.json) become a file of their own,
// listed in index.html's <meta name="catalogues">: the app fetches only the one it speaks.
// Usage: node scripts/build-app.mjs [out-dir]
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dirname, '..')
const SRC = join(ROOT, 'webapp')
const LOCALES = join(ROOT, 'locales')
const OUT = resolve(process.argv[2] ?? join(ROOT, 'dist/app'))
const ASSETS = join(OUT, 'assets')
const IMPORT = /(from\s*|import\s*\(?\s*)'\.\/([\w-]+)\.js'/g

const compiled = mkdtempSync(join(tmpdir(), 'link-service-app-'))
try {
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(SRC, 'tsconfig.json'), '--outDir', compiled], { stdio: 'inherit' })
  rmSync(OUT, { recursive: true, force: true })
  mkdirSync(ASSETS, { recursive: true })

  const hashed = (name, ext, text) => `${name}.${createHash('sha256').update(text).digest('base64url').slice(0, 10)}${ext}`
  const emit = (file, text) => (writeFileSync(join(ASSETS, file), text), file)

  // Modules import one another by file name: a module's hash covers its imports' hashed names,
  // so it is named after every module it imports (imports run one way; a cycle stops the build).
  const sources = new Map(readdirSync(compiled).filter((f) => f.endsWith('.js')).map((f) => [f.slice(0, -3), readFileSync(join(compiled, f), 'utf8')]))
  const names = new Map()
  const visiting = new Set()
  const nameOf = (module) => {
    if (names.has(module)) return names.get(module)
    if (!sources.has(module)) throw new Error(`webapp: ./${module}.js is imported but not built`)
    if (visiting.has(module)) throw new Error(`webapp: an import cycle through ${module}`)
    visiting.add(module)
    const text = sources.get(module).replace(IMPORT, (_, lead, dep) => `${lead}'./${nameOf(dep)}'`).replace(/\n\/\/# sourceMappingURL=.*$/m, '')
    const file = emit(hashed(module, '.js', text), text)
    names.set(module, file)
    return file
  }
  const main = nameOf('main')
  const modules = [...names.values()]

  const icon = readFileSync(join(SRC, 'icon.svg'))
  const iconFile = emit(hashed('icon', '.svg', icon), icon)
  const css = readFileSync(join(SRC, 'styles.css'), 'utf8')
  const cssFile = emit(hashed('styles', '.css', css), css)

  const catalogues = {}
  for (const file of readdirSync(LOCALES).filter((f) => f.endsWith('.json')).sort()) {
    const tag = file.slice(0, -5).toLowerCase()
    const { language, app } = JSON.parse(readFileSync(join(LOCALES, file), 'utf8'))
    const text = JSON.stringify(app)
    catalogues[tag] = { name: language.name, dir: language.dir, href: `/app/assets/${emit(hashed(`messages-${tag}`, '.json', text), text)}` }
  }
  const attribute = JSON.stringify(catalogues).replace(/&/g, '&amp;').replace(/"/g, '&quot;')

  const html = readFileSync(join(SRC, 'index.html'), 'utf8')
    .replace('{{catalogues}}', attribute)
    .replace('{{icon}}', `/app/assets/${iconFile}`)
    .replace('{{styles}}', `/app/assets/${cssFile}`)
    .replace('{{preload}}', modules.filter((m) => m !== main).map((m) => `<link rel="modulepreload" href="/app/assets/${m}">`).join('\n    '))
    .replace('{{main}}', `/app/assets/${main}`)
  writeFileSync(join(OUT, 'index.html'), html)
  console.log(`webapp: ${modules.length} modules, ${cssFile}, ${Object.keys(catalogues).length} catalogues, index.html → ${OUT}`)
} finally {
  rmSync(compiled, { recursive: true, force: true })
}
