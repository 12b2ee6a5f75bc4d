// The split test in the web app, in Chromium: variants in the link form with their shares as
// percentages, and on the link's page the results per variant, the winner in words and the
// destination page's snippet. Skipped, with a plain line saying so, where Chromium is not installed.
import type { Browser, Page } from 'playwright-core'
import * as assert from 'uvu/assert'
import { call, newUser, type User } from '../helpers/api.js'
import { assertAccessible, browserAvailable, launchBrowser, screenshot, signedInContext } from '../helpers/browser.js'
import { serverSuite } from '../helpers/server.js'

if (browserAvailable()) {
  const test = serverSuite<{ browser: Browser; page: Page; user: User; problems: string[]; code: string }>('split test in Chromium', { VISIT_FLUSH_MS: '60000' })
  test.before(async (ctx) => {
    ctx.browser = await launchBrowser()
    ctx.user = await newUser(ctx.srv.url)
    ctx.page = await (await signedInContext(ctx.browser, ctx.user.token)).newPage()
    ctx.problems = []
    ctx.page.on('pageerror', (e) => ctx.problems.push(e.message))
  })
  test.after(async (ctx) => {
    await ctx.browser?.close()
  })

  test('the form shows each variant\'s share as a percentage and creates the split test', async ({ srv, page, user, problems }) => {
    await page.goto(`${srv.url}/app/links/new`)
    await page.getByRole('heading', { level: 1, name: 'New link' }).waitFor()
    await page.getByLabel('URL', { exact: true }).fill('https://example.com/landing')
    await page.getByText('Split test: send visitors to several pages').click()
    const pages = page.getByLabel('Variant page')
    const weights = page.getByLabel('Variant weight')
    await pages.nth(0).fill('https://example.com/a')
    await pages.nth(1).fill('https://example.com/b')
    await weights.nth(0).fill('30')
    await weights.nth(1).fill('10')
    await page.getByText('75% of visitors').waitFor()
    await page.getByText('25% of visitors').waitFor()
    await page.getByLabel(/Count conversions/).check()
    await assertAccessible(page, 'the link form with a split test')
    await screenshot(page, 'split-test-form')
    await page.getByRole('button', { name: 'Create link' }).click()
    await page.getByText(/^Created /).waitFor()
    const code = new URL(page.url()).pathname.split('/').pop()!
    const link = await call(srv.url, 'GET', `/api/v1/links/${code}`, { token: user.token })
    assert.equal([link.body.variants, link.body.conversions, link.body.promote_winner], [[{ url: 'https://example.com/a', weight: 30 }, { url: 'https://example.com/b', weight: 10 }], true, false])
    assert.equal(problems, [])
  })

  test('the link page shows each variant\'s results, the winner in plain words, and the snippet', async (ctx) => {
    const { srv, page, user, problems } = ctx
    const res = await call(srv.url, 'POST', '/api/v1/links', { token: user.token, body: { url: 'https://example.com/', variants: [{ url: 'https://example.com/a', weight: 50 }, { url: 'https://example.com/b', weight: 50 }], conversions: true } })
    const code = (ctx.code = res.body.code)
    for (let i = 0; i < 300; i++) {
      const ip = `10.37.${i >> 8}.${i & 255}`
      const r = await call(srv.url, 'GET', `/r/${code}`, { ip, headers: { 'user-agent': `Mozilla/5.0 (X11; Linux x86_64) Chrome/125.0.0.0 Safari/537.36 visitor/${i}` } })
      const to = new URL(r.headers.get('location')!)
      // the second page converts one visit in two, the first none
      if (to.pathname === '/b' && i % 2 === 0) assert.is((await call(srv.url, 'POST', `/c/${to.searchParams.get('ls_cid')}`, { ip })).status, 204)
    }
    await srv.service.deps.experiments.flush()
    await page.goto(`${srv.url}/app/links/${code}`)
    await page.getByRole('heading', { name: 'Split test, last 30 days' }).waitFor()
    await page.getByText(/Variant 2 converts best, and we are at least 95% sure/).waitFor()
    assert.ok((await page.locator('pre code').textContent())!.includes(`navigator.sendBeacon('${srv.service.deps.baseUrl}/c/'+c)`))
    assert.is(await page.locator('tr.winner th a').textContent(), 'https://example.com/b')
    await assertAccessible(page, 'the link page with a split test')
    await screenshot(page, 'split-test-results')
    assert.equal(problems, [])
  })

  test('the split test in German and in Arabic: the form\'s shares and the verdict in the language, Arabic right to left', async ({ srv, browser, user, code }) => {
    const words = {
      de: { summary: 'A/B-Test', share: /^75\s%\sder Besucher$/, title: 'A/B-Test der letzten 30 Tage', verdict: /^Variante 2 konvertiert am besten/ },
      ar: { summary: 'اختبار', share: /من الزوار$/, title: /^اختبار/, verdict: /^البديل .+ يحقق أعلى معدل تحويل/ },
    }
    for (const lang of ['de', 'ar'] as const) {
      for (const width of [1280, 360]) {
        const page = await (await signedInContext(browser, user.token, { locale: lang === 'de' ? 'de-DE' : 'ar-EG', viewport: { width, height: 900 } })).newPage()
        const problems: string[] = []
        page.on('pageerror', (e) => problems.push(e.message))
        await page.goto(`${srv.url}/app/links/new`)
        await page.locator('summary', { hasText: words[lang].summary }).click()
        const weights = page.locator('[name=variant_weight]')
        await page.locator('[name=variant_url]').nth(0).fill('https://example.com/a')
        await page.locator('[name=variant_url]').nth(1).fill('https://example.com/b')
        await weights.nth(0).fill('30')
        await weights.nth(1).fill('10')
        await page.locator('output.share', { hasText: words[lang].share }).first().waitFor()
        assert.is(await page.locator('html').getAttribute('dir'), lang === 'ar' ? 'rtl' : 'ltr')
        await assertAccessible(page, `the link form with a split test (${lang})`)
        await screenshot(page, `split-test-form-${lang}-${width}`)
        await page.goto(`${srv.url}/app/links/${code}`)
        await page.getByRole('heading', { name: words[lang].title }).waitFor()
        await page.getByText(words[lang].verdict).waitFor()
        await assertAccessible(page, `the link page with a split test (${lang})`)
        await screenshot(page, `split-test-results-${lang}-${width}`)
        assert.equal(problems, [])
        await page.context().close()
      }
    }
  })

  test.run()
} else {
  console.log('split test in Chromium: skipped, /usr/bin/chromium is not installed')
}
