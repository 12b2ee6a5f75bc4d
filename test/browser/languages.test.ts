// The web app and the visitor pages in the visitor's language, in a real Chromium: a German
// browser gets German, an Arabic one Arabic laid out right to left, the switcher keeps a choice
// for the tab, and the main screens and the visitor pages (the transparency report among them)
// pass axe-core at 360 and 1280 px in both (screenshots in build/screenshots, named
// lang-{de|ar}-...). Skipped where Chromium is not installed.
import type { Browser, BrowserContext, Page } from 'playwright-core'
import * as assert from 'uvu/assert'
import { call, newUser, type User } from '../helpers/api.js'
import { assertAccessible, browserAvailable, launchBrowser, screenshot, signedInContext } from '../helpers/browser.js'
import { serverSuite } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

interface Ctx {
  browser: Browser
  user: User
  /** a link with visits, tags and a card */
  code: string
  /** a link with a password */
  locked: string
}

const LOCALES = { de: 'de-DE', ar: 'ar-EG' } as const

/** No catalogue key shown as such (a key missing from the catalogue shows as its name). */
const NO_KEY = /\b(nav|links|fact|form|chart|breakdown|account|sessions|report|signIn|signUp|visits|field|transparency)\.[a-zA-Z]+/

async function assertScreen(page: Page, lang: keyof typeof LOCALES, where: string): Promise<void> {
  assert.equal(await page.evaluate('[document.documentElement.lang, document.documentElement.dir]'), [lang, lang === 'ar' ? 'rtl' : 'ltr'], where)
  assert.not.match(await page.evaluate<string>('document.body.innerText'), NO_KEY, `${where}: a key shown instead of its words`)
  await assertAccessible(page, where)
  assert.is(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), 0, `${where}: no sideways scrolling`)
}

if (browserAvailable()) {
  const test = serverSuite<Ctx>('the web app and the visitor pages in German and Arabic')

  test.before(async (ctx) => {
    ctx.browser = await launchBrowser()
    ctx.user = await newUser(ctx.srv.url)
    const made = await call(ctx.srv.url, 'POST', '/api/v1/links', { token: ctx.user.token, body: { url: 'https://example.com/docs', tags: ['newsletter'], title: 'Docs', max_visits: 100 } })
    ctx.code = made.body.code
    await fetch(`${ctx.srv.url}/r/${ctx.code}`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux) Firefox/130.0', 'x-forwarded-for': '8.8.8.8' } })
    await until(5_000, async () => (await call(ctx.srv.url, 'GET', `/api/v1/links/${ctx.code}`, { token: ctx.user.token })).body.visits === 1)
    ctx.locked = (await call(ctx.srv.url, 'POST', '/api/v1/links', { token: ctx.user.token, body: { url: 'https://example.com/locked', password: 'open sesame please' } })).body.code
  })

  test.after(async (ctx) => {
    await ctx.browser?.close()
  })

  test('a Chromium with the German locale shows the sign-in screen in German, fetching only the German catalogue', async ({ srv, browser }) => {
    const context = await browser.newContext({ locale: 'de-DE', viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const catalogues: string[] = []
    page.on('request', (r) => {
      if (/\/messages-[\w-]+\.[\w-]+\.json$/.test(r.url())) catalogues.push(new URL(r.url()).pathname)
    })
    await page.goto(srv.url + '/')
    await page.waitForURL('**/app/signin')
    await page.getByRole('heading', { level: 1, name: 'Anmelden' }).waitFor()
    assert.is(await page.title(), 'Anmelden · Link Service')
    assert.equal(await page.evaluate('[document.documentElement.lang, document.documentElement.dir]'), ['de', 'ltr'])
    await page.getByLabel('Benutzername').waitFor()
    await page.getByRole('link', { name: 'Registrieren' }).first().waitFor()
    assert.is(await page.locator('.skip').textContent(), 'Zum Inhalt springen')
    assert.equal(catalogues.length, 1)
    assert.match(catalogues[0]!, /^\/app\/assets\/messages-de\./)
    // An error the API answers for a known code is told in German too.
    await page.getByLabel('Benutzername').fill('nobody-here')
    await page.getByLabel('Passwort').fill('wrong password')
    await page.getByRole('button', { name: 'Anmelden' }).click()
    await page.getByText('Benutzername oder Passwort ist falsch.').waitFor()
    await context.close()
  })

  test('the switcher changes the language of this tab and keeps it on reload; another tab follows the browser again', async ({ srv, browser }) => {
    const context: BrowserContext = await browser.newContext({ locale: 'de-DE', viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    await page.goto(`${srv.url}/app/signin`)
    await page.getByRole('heading', { level: 1, name: 'Anmelden' }).waitFor()
    await page.getByLabel('Sprache').selectOption('ar')
    await page.getByRole('heading', { level: 1, name: 'تسجيل الدخول' }).waitFor()
    assert.equal(await page.evaluate('[document.documentElement.lang, document.documentElement.dir]'), ['ar', 'rtl'])
    assert.is(await page.evaluate("document.activeElement?.id"), 'language', 'focus stays on the switcher')
    await page.reload()
    await page.getByRole('heading', { level: 1, name: 'تسجيل الدخول' }).waitFor()
    await page.getByLabel('اللغة').selectOption('fr')
    await page.getByRole('heading', { level: 1, name: 'Connexion' }).waitFor()
    const other = await context.newPage()
    await other.goto(`${srv.url}/app/signin`)
    await other.getByRole('heading', { level: 1, name: 'Anmelden' }).waitFor()
    await context.close()
  })

  test('dates, numbers and percentages follow the language; Arabic lays out right to left with its charts left to right', async ({ srv, browser, user, code }) => {
    for (const lang of ['de', 'ar'] as const) {
      const context = await signedInContext(browser, user.token, { locale: LOCALES[lang] })
      const page = await context.newPage()
      await page.goto(`${srv.url}/app/links/${code}`)
      await page.locator('svg.day-chart').waitFor()
      const text = await page.evaluate<string>('document.body.innerText')
      const expected = new Intl.NumberFormat(lang, { style: 'percent' }).format(1)
      assert.ok(text.includes(expected), `${lang}: the share as ${expected}`)
      if (lang === 'de') assert.match(text, /1 Aufruf: 1 von Menschen, 0 von Bots und Linkvorschauen\./)
      else {
        assert.match(text, /زيارة واحدة/)
        assert.is(await page.evaluate("getComputedStyle(document.querySelector('svg.day-chart')).direction"), 'ltr')
        assert.is(await page.evaluate("getComputedStyle(document.querySelector('main')).direction"), 'rtl')
      }
      await context.close()
    }
  })

  test('the main screens and the visitor pages in German and Arabic at 360 and 1280 px: axe-core, no sideways scrolling, photographed', async ({ srv, browser, user, code, locked }) => {
    const signedOut: Array<[string, string]> = [
      ['sign-in', '/app/signin'],
      ['sign-up', '/app/signup'],
      ['report', `/app/report?code=${code}`],
    ]
    const signedIn: Array<[string, string]> = [
      ['links', '/app/links'],
      ['link', `/app/links/${code}`],
      ['create', '/app/links/new'],
      ['edit', `/app/links/${code}/edit`],
      ['sessions', '/app/sessions'],
      ['account', '/app/account'],
    ]
    const visitor: Array<[string, string, number]> = [
      ['visitor-unknown', '/r/Zz9Zz9Zz', 404],
      ['visitor-password', `/r/${locked}`, 401],
      ['visitor-preview', `/r/${code}/preview`, 200],
      ['transparency', '/transparency', 200],
    ]
    for (const lang of ['de', 'ar'] as const) {
      for (const width of [360, 1280]) {
        const options = { locale: LOCALES[lang], viewport: { width, height: 800 } }
        const problems: string[] = []
        const watch = (page: Page) => page.on('pageerror', (e) => problems.push(e.message))
        const open = await browser.newContext(options)
        const page = await open.newPage()
        watch(page)
        for (const [name, path] of signedOut) {
          await page.goto(srv.url + path)
          await page.locator('main h1').waitFor()
          await assertScreen(page, lang, `${name} in ${lang} at ${width} px`)
          await screenshot(page, `lang-${lang}-${name}-${width}`)
        }
        for (const [name, path, status] of visitor) {
          const res = await page.goto(srv.url + path)
          assert.is(res?.status(), status, path)
          assert.is(res?.headers()['content-language'], lang)
          await assertScreen(page, lang, `${name} in ${lang} at ${width} px`)
          await screenshot(page, `lang-${lang}-${name}-${width}`)
        }
        await open.close()
        const signed = await signedInContext(browser, user.token, options)
        const inside = await signed.newPage()
        watch(inside)
        for (const [name, path] of signedIn) {
          await inside.goto(srv.url + path)
          await inside.locator('main h1').waitFor()
          await inside.waitForLoadState('networkidle')
          await assertScreen(inside, lang, `${name} in ${lang} at ${width} px`)
          await screenshot(inside, `lang-${lang}-${name}-${width}`)
        }
        await signed.close()
        assert.equal(problems, [], `${lang} at ${width} px: no script error`)
      }
    }
  })

  test.run()
}
