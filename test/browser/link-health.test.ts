// The web app's health badges, the health filter and "Check now", in Chromium against a real
// server whose checks reach a local target: a reachable link and one whose page redirects to a
// blocked host. Each screen scanned by axe-core at 1280 and 360 px, light and dark, and
// photographed (build/screenshots); then the same in German and Arabic, with the flagged link's
// visitor page (link-health-{de|ar}-*). Skipped, with a plain line saying so, where Chromium is not
// installed.
import type { Browser } from 'playwright-core'
import * as assert from 'uvu/assert'
import { blockHost } from '../../src/admin/blocks.js'
import { readCatalogues } from '../../src/web/catalogues.js'
import { call, newLink, newUser, uniqueName, type User } from '../helpers/api.js'
import { assertAccessible, browserAvailable, launchBrowser, screenshot, signedInContext } from '../helpers/browser.js'
import { serverSuite } from '../helpers/server.js'
import { Target } from '../helpers/target.js'
import { until } from '../helpers/wait.js'

const ENV = { LINK_CHECKS: 'on', LINK_CHECK_ALLOW_PRIVATE: 'on' }

interface Ctx {
  browser: Browser
  user: User
  target: Target
  ok: string
  flagged: string
}

if (browserAvailable()) {
  const test = serverSuite<Ctx>('web app in Chromium: link health', ENV)

  test.before(async (ctx) => {
    ctx.browser = await launchBrowser()
    ctx.target = await new Target().start()
    ctx.user = await newUser(ctx.srv.url)
    const evil = `${uniqueName('evil')}.example`
    await blockHost(ctx.srv.service.db.sql, evil)
    ctx.target.answer('/moved', { status: 302, location: `https://${evil}/login` })
    ctx.ok = (await newLink(ctx.srv.url, ctx.user.token, ctx.target.url('/fine'))).code
    ctx.flagged = (await newLink(ctx.srv.url, ctx.user.token, ctx.target.url('/moved'))).code
    const statusOf = async (code: string) => (await call(ctx.srv.url, 'GET', `/api/v1/links/${code}`, { token: ctx.user.token })).body.health.status
    await until(10_000, async () => (await statusOf(ctx.ok)) === 'ok' && (await statusOf(ctx.flagged)) === 'flagged', { every: 100 })
  })

  test.after(async (ctx) => {
    await ctx.browser?.close()
    await ctx.target?.stop()
  })

  const app = (ctx: Ctx & { srv: { service: { deps: { baseUrl: string } } } }, path: string) => `${ctx.srv.service.deps.baseUrl}/app/${path}`

  test('the list shows each link\'s health as a badge and filters by it; the link page says why and checks again on demand', async (ctx) => {
    for (const width of [1280, 360]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        const context = await signedInContext(ctx.browser, ctx.user.token, { viewport: { width, height: 900 }, colorScheme })
        const page = await context.newPage()
        const problems: string[] = []
        page.on('pageerror', (e) => problems.push(e.message))
        const where = `${width} px, ${colorScheme}`

        await page.goto(app(ctx, 'links'))
        await page.getByText('2 of 50 links').waitFor()
        assert.equal((await page.locator('.link-card .badge').allInnerTexts()).sort(), ['Flagged', 'Reachable'])
        await page.getByLabel('Health').selectOption('flagged')
        await page.getByRole('button', { name: 'Filter' }).click()
        await page.waitForURL((u) => u.search === '?health=flagged')
        await page.getByText('1 link matches').waitFor()
        assert.equal(await page.locator('.link-card a.code').allInnerTexts(), [`${ctx.srv.service.deps.baseUrl}/r/${ctx.flagged}`])
        assert.match(await page.locator('.link-card').innerText(), /Stopped: it leads to a blocked site/)
        await assertAccessible(page, `links filtered by health at ${where}`)
        await screenshot(page, `links-health-${width}-${colorScheme}`)

        await page.goto(app(ctx, `links/${ctx.flagged}`))
        await page.getByRole('heading', { level: 1, name: ctx.flagged }).waitFor()
        assert.match(await page.locator('.facts').innerText(), /Flagged.*on the block list/s)
        await page.getByRole('button', { name: 'Check now' }).click()
        await page.getByText('Checked its destination.').waitFor()
        await assertAccessible(page, `a flagged link's page at ${where}`)
        await screenshot(page, `link-health-${width}-${colorScheme}`)
        await context.close()
        assert.equal(problems, [], `${where}: no script error`)
      }
    }
  })

  test('in German and Arabic the badges, the filter, Check now and the flagged link\'s visitor page speak the language; Arabic reads right to left', async (ctx) => {
    const catalogues = readCatalogues()
    for (const [lang, locale] of [['de', 'de-DE'], ['ar', 'ar-EG']] as const) {
      const { app: words, page: pageWords } = catalogues.get(lang)!
      const context = await signedInContext(ctx.browser, ctx.user.token, { locale, viewport: { width: 360, height: 900 } })
      const page = await context.newPage()
      const problems: string[] = []
      page.on('pageerror', (e) => problems.push(e.message))

      await page.goto(app(ctx, 'links'))
      await page.locator('.link-card .badge').first().waitFor()
      assert.equal(await page.evaluate('[document.documentElement.lang, document.documentElement.dir]'), [lang, lang === 'ar' ? 'rtl' : 'ltr'])
      assert.equal((await page.locator('.link-card .badge').allInnerTexts()).sort(), [words['health.flagged'], words['health.ok']].sort())
      assert.ok((await page.locator('#filter-health option').allInnerTexts()).includes(words['filter.anyHealth'] as string), 'the filter in the language')
      assert.match(await page.locator('.link-card').filter({ hasText: words['health.flagged'] as string }).innerText(), words['expiry.flagged'] as string)
      await assertAccessible(page, `links with health in ${lang}`)
      await screenshot(page, `links-health-${lang}-360`)

      await page.goto(app(ctx, `links/${ctx.flagged}`))
      await page.getByRole('button', { name: words['check.now'] as string }).waitFor()
      assert.match((await page.locator('.facts').textContent()) ?? '', words['fact.health'] as string)
      assert.is(await page.locator('.health-detail').getAttribute('dir'), 'ltr', 'the check\'s English detail reads left to right')
      await assertAccessible(page, `a flagged link's page in ${lang}`)
      await screenshot(page, `link-health-${lang}-360`)

      const visitor = await page.goto(`${ctx.srv.url}/r/${ctx.flagged}`)
      assert.is(visitor?.status(), 410)
      assert.is(await page.locator('h1').innerText(), pageWords['flagged.title'])
      assert.match(await page.locator('main').innerText(), (pageWords['flagged.text'] as string).slice(0, 20))
      await assertAccessible(page, `the flagged visitor page in ${lang}`)
      await screenshot(page, `link-health-${lang}-visitor-360`)
      await context.close()
      assert.equal(problems, [], `${lang}: no script error`)
    }
  })

  test.run()
} else {
  process.stdout.write('link-health.test: skipped: Chromium is not installed\n')
}
