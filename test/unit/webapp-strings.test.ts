// Every word the web app shows comes from its catalogue: the app's sources are read with the
// TypeScript parser, and any string that reads as words (a capitalised word, or two words) outside
// a t('key') call, a class name, a selector or a tag fails here, named with its file and line. And
// the keys the app uses are exactly those of locales/en.json's "app" section.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import ts from 'typescript'
import { readCatalogues } from '../../src/web/catalogues.js'

const DIR = 'webapp/src'
const KEYS = new Set(Object.keys(readCatalogues().get('en')!.app))

/** Calls whose string arguments are never shown: selectors, tags, attributes, storage keys, URLs. */
const NOT_SHOWN_CALLS = new Set(['querySelector', 'querySelectorAll', 'closest', 'getElementById', 'addEventListener', 'setAttribute', 'removeAttribute', 'getAttribute', 'add', 'remove', 'getItem', 'setItem', 'removeItem', 'h', 'svg', 'fetch', 'get', 'post', 'patch', 'act', 'blob', 'navigate', 'listPath', 'downloadButton', 'matchAll', 'replace', 'split', 'startsWith', 'endsWith'])
/** Attributes whose values are never read as words. */
const NOT_SHOWN_ATTRIBUTES = new Set(['class', 'id', 'type', 'name', 'autocomplete', 'href', 'rel', 'inputmode', 'scope', 'role', 'for', 'download', 'pattern', 'method', 'src', 'viewBox', 'text-anchor', 'points', 'aria-describedby', 'aria-labelledby'])
/** Strings that read as words but are not for people: each with why. */
const ALLOWED = new Map([
  ['api.ts:Bearer ', 'the Authorization scheme'],
])

const looksLikeWords = (text: string) => /^[A-Z][a-z]+\b/.test(text.trim()) || /\b[a-z]{2,} [a-z]{2,}\b/.test(text)

interface Found {
  literals: Array<{ where: string; text: string }>
  keys: Array<{ where: string; key: string }>
  all: Set<string>
}

function scan(file: string, found: Found): void {
  const source = ts.createSourceFile(file, readFileSync(join(DIR, file), 'utf8'), ts.ScriptTarget.Latest, true)
  const where = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`
  const calleeName = (call: ts.CallExpression) => (ts.isIdentifier(call.expression) ? call.expression.text : ts.isPropertyAccessExpression(call.expression) ? call.expression.name.text : '')
  /** Whether a string at `node` cannot be shown: a key, a module, a type, a selector or attribute value, a comparison. */
  function notShown(node: ts.Node): boolean {
    let child = node
    for (let parent = node.parent; parent !== undefined; child = parent, parent = parent.parent) {
      if (ts.isImportDeclaration(parent) || ts.isExportDeclaration(parent) || ts.isLiteralTypeNode(parent)) return true
      if (ts.isPropertyAssignment(parent)) {
        if (parent.name === child) return true
        const name = ts.isIdentifier(parent.name) || ts.isStringLiteral(parent.name) ? parent.name.text : ''
        return NOT_SHOWN_ATTRIBUTES.has(name)
      }
      if (ts.isBinaryExpression(parent) && [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken].includes(parent.operatorToken.kind)) return true
      if (ts.isCaseClause(parent) || ts.isElementAccessExpression(parent)) return true
      if (ts.isCallExpression(parent)) {
        const name = calleeName(parent)
        if (name === 't' || name === 'tNodes') return parent.arguments[0] === child
        return NOT_SHOWN_CALLS.has(name) && parent.arguments[0] === child
      }
      // A string inside a template or a conditional belongs to the expression around it.
      if (!(ts.isTemplateSpan(parent) || ts.isTemplateExpression(parent) || ts.isConditionalExpression(parent) || ts.isParenthesizedExpression(parent) || ts.isBinaryExpression(parent))) return false
    }
    return false
  }
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ['t', 'tNodes'].includes(calleeName(node))) {
      const [first] = node.arguments
      if (first !== undefined && ts.isStringLiteral(first)) found.keys.push({ where: where(node), key: first.text })
    }
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      found.all.add(node.text)
      const literal = ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node : node.parent
      if (looksLikeWords(node.text) && !notShown(literal) && !ALLOWED.has(`${file}:${node.text}`)) found.literals.push({ where: where(node), text: node.text })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
}

const found: Found = { literals: [], keys: [], all: new Set() }
for (const file of readdirSync(DIR).filter((f) => f.endsWith('.ts'))) scan(file, found)

test('no string the web app shows is written in its code: each comes from the catalogue through t()', () => {
  assert.equal(found.literals.map((l) => `${l.where}: ${JSON.stringify(l.text)}`), [])
})

test('the scan would see one: a sentence, a capitalised word, a template with words', () => {
  for (const text of ['Sign in', 'Copy', 'visits in the last']) assert.ok(looksLikeWords(text), text)
  for (const text of ['button primary', 'link-service.session', 'https://example.com/page', 'INVALID_FORM_BODY', 'main h1']) {
    assert.is(looksLikeWords(text) && !['button primary', 'main h1'].includes(text), false, text)
  }
  assert.ok(found.keys.length > 200, `${found.keys.length} t() calls seen`)
})

test('every key the app asks for is in the catalogue, and every key of the catalogue is used', () => {
  assert.equal(found.keys.filter((k) => !KEYS.has(k.key)).map((k) => `${k.where}: ${k.key}`), [], 'keys missing from locales/en.json')
  assert.equal([...KEYS].filter((k) => !found.all.has(k)), [], 'keys no code uses')
})

test.run()
