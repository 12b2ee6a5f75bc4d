// The Account screen's "Download my data": the export arrives as a file in Chromium, whole, and
// the screen stays accessible with the new panel (axe-core), photographed (build/screenshots).
// Skipped, with a plain line saying so, where Chromium is not installed.
import { readFileSync } from 'node:fs'
import type { Browser } from 'playwright-core'
import * as assert from 'uvu/assert'
import { newLink, newUser } from '../helpers/api.js'
import { assertAccessible, browserAvailable, launchBrowser, screenshot, signedInContext } from '../helpers/browser.js'
import { serverSuite } from '../helpers/server.js'

if (browserAvailable()) {
  const test = serverSuite<{ browser: Browser }>('web app in Chromium: download my data')
  test.before(async (ctx) => {
    ctx.browser = await launchBrowser()
  })
  test.after(async (ctx) => {
    await ctx.browser?.close()
  })

  test('"Download my data" on the Account screen saves the JSON export with the account\'s links', async ({ srv, browser }) => {
    const user = await newUser(srv.url)
    const link = await newLink(srv.url, user.token, 'https://example.com/exported')
    const context = await signedInContext(browser, user.token, { acceptDownloads: true })
    try {
      const page = await context.newPage()
      const problems: string[] = []
      page.on('pageerror', (e) => problems.push(e.message))
      page.on('console', (m) => m.type() === 'error' && problems.push(m.text()))
      await page.goto(`${srv.url}/app/account`)
      await page.getByRole('heading', { level: 2, name: 'Your data' }).waitFor()
      await assertAccessible(page, 'account with download')
      await screenshot(page, 'account-export')
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download my data' }).click()])
      assert.is(download.suggestedFilename(), `link-service-${user.username}.json`)
      const body = JSON.parse(readFileSync((await download.path())!, 'utf8'))
      assert.equal([body.account.username, body.links.map((l: { code: string }) => l.code)], [user.username, [link.code]])
      assert.equal(problems, [])
    } finally {
      await context.close()
    }
  })

  test.run()
} else {
  console.log('SKIPPED web app in Chromium: download my data (no Chromium at /usr/bin/chromium)')
}
