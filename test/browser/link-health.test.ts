// The web app's health badges, the health filter and "Check now", in Chromium against a real
// server whose checks reach a local target: a reachable link and one whose page redirects to a
// blocked host. Each screen scanned by axe-core at 1280 and 360 px, light and dark, and
// photographed (build/screenshots). Skipped, with a plain line saying so, where Chromium is not
// installed.
import type { Browser } from 'playwright-core'
import * as assert from 'uvu/assert'
import { blockHost } from '../../src/admin/blocks.js'
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

  test.run()
} else {
  process.stdout.write('link-health.test: skipped: Chromium is not installed\n')
}
