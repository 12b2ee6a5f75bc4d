// A real browser for the web app's tests: Debian's Chromium (/usr/bin/chromium) driven by
// playwright-core, which downloads nothing. Without Chromium the browser tests say so and are not
// run, unless REQUIRE_BROWSER=1 (CI), where that is a failure.
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core'
import * as assert from 'uvu/assert'

export const CHROMIUM = '/usr/bin/chromium'
/** Where screenshots of each screen go: a test artifact (scripts/test.sh empties build/ first). */
export const SCREENSHOTS = resolve('build/screenshots')

/**
 * Whether the browser tests can run; when not, says so plainly on stdout. With REQUIRE_BROWSER=1
 * (CI) a missing Chromium throws instead.
 */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true
  const why = `${CHROMIUM} is not installed (apt-get install chromium)`
  if (process.env.REQUIRE_BROWSER === '1') throw new Error(`REQUIRE_BROWSER=1 but ${why}`)
  console.log(`\nThe browser tests were NOT run: ${why}.\n`)
  return false
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
  })
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

interface Violation {
  id: string
  impact: string | null
  help: string
  nodes: Array<{ target: string[] }>
}

/**
 * Runs axe-core (WCAG 2.x A and AA rules) on the page as it is and fails on any serious or
 * critical violation, naming each with the elements concerned.
 */
export async function assertAccessible(page: Page, where: string): Promise<void> {
  // Colours are judged once they have settled: a toast fading in is half its contrast.
  await page.evaluate('Promise.allSettled(document.getAnimations().map((a) => a.finished))')
  // The script goes in through the DevTools protocol, which the page's CSP does not govern.
  if (!(await page.evaluate("'axe' in window"))) await page.evaluate(AXE_SOURCE)
  const violations = (await page.evaluate(
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } }).then((r) => r.violations)",
  )) as Violation[]
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  assert.equal(
    bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `accessibility of ${where}`,
  )
}

/** A full-page screenshot named after the screen, into SCREENSHOTS. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const path = join(SCREENSHOTS, `${name}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}

/** A browser context whose tabs start signed in with `token` (as the app keeps it: in sessionStorage). */
export async function signedInContext(browser: Browser, token: string, options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options })
  const expires = new Date(Date.now() + 3_600_000).toISOString()
  await context.addInitScript(`sessionStorage.setItem('link-service.session', ${JSON.stringify(JSON.stringify({ token, expires_at: expires }))})`)
  return context
}
