// The web app in a real browser: Chromium against a real server, through the whole
// journey a person takes, each screen scanned by axe-core at 1280 and 360 px and photographed
// (build/screenshots). Skipped, with a plain line saying so, where Chromium is not installed.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import * as assert from 'uvu/assert'
import { call, login, newUser, uniqueName, type User } from '../helpers/api.js'
import { assertAccessible, browserAvailable, launchBrowser, screenshot, signedInContext } from '../helpers/browser.js'
import { serverSuite, type TestServer } from '../helpers/server.js'
import { blockHost, unblockHost } from '../../src/admin/blocks.js'
import { disableLink } from '../../src/admin/links.js'
import { until } from '../helpers/wait.js'

const PASSWORD = 'correct horse battery'

interface Ctx {
  browser: Browser
  context: BrowserContext
  page: Page
  /** messages the page logged as errors, CSP refusals included */
  problems: string[]
  username: string
  code: string
  /** the link made with a password, a limit, a card and tags */
  tagged: string
}

/** The line under a field where its error shows (the field's id + "-error", named by aria-describedby). */
async function errorOf(page: Page, label: string): Promise<string> {
  const input = page.getByLabel(label, { exact: true })
  const describedBy = (await input.getAttribute('aria-describedby')) ?? ''
  assert.ok(describedBy.includes('-error'), `${label} is described by its error line`)
  const id = describedBy.split(' ').find((s) => s.endsWith('-error'))!
  const line = page.locator(`[id="${id}"]`)
  await line.waitFor({ state: 'visible' })
  assert.is(await input.getAttribute('aria-invalid'), 'true')
  return (await line.textContent()) ?? ''
}

/** The app's token in this tab (the test reads it to check the API's side of an action). */
const tabToken = (page: Page): Promise<string | undefined> => page.evaluate("JSON.parse(sessionStorage.getItem('link-service.session') ?? 'null')?.token")

const heading = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor()

function watch(page: Page, problems: string[]): void {
  page.on('console', (m) => {
    // A 4xx the app asked for on purpose is logged by Chromium as a failed resource; those are expected.
    if (m.type() === 'error' && !/status of (401|403|409|422|429)/.test(m.text())) problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(e.message))
}

if (browserAvailable()) {
  const test = serverSuite<Ctx>('web app in Chromium')

  test.before(async (ctx) => {
    ctx.browser = await launchBrowser()
    ctx.context = await ctx.browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true })
    await ctx.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.srv.service.deps.baseUrl })
    ctx.page = await ctx.context.newPage()
    ctx.problems = []
    watch(ctx.page, ctx.problems)
    ctx.username = uniqueName('web')
    ctx.code = `W${uniqueName().slice(-7)}`.replace(/[^0-9A-Za-z]/g, 'x').padEnd(8, 'x').slice(0, 8)
  })

  test.after(async (ctx) => {
    await ctx.browser?.close()
  })

  // The browser stays on BASE_URL's origin (where / sends it): sessionStorage belongs to one origin.
  const app = (ctx: Ctx & { srv: TestServer }, path: string) => `${ctx.srv.service.deps.baseUrl}/app/${path}`

  test('GET / brings a browser to the sign-in screen, which runs under the CSP without an error', async (ctx) => {
    const { page } = ctx
    const res = await page.goto(ctx.srv.url + '/')
    // The app first fetches its language's catalogue, then routes.
    await page.waitForURL('**/app/signin')
    assert.ok(res !== null && res.headers()['content-security-policy']?.startsWith("default-src 'self'"))
    await heading(page, 'Sign in')
    assert.is(await page.title(), 'Sign in · Link Service')
    await assertAccessible(page, 'sign in')
    await screenshot(page, 'sign-in')
    assert.equal(ctx.problems, [])
  })

  test('sign up shows each API error next to its field, then signs in to an empty list', async (ctx) => {
    const { page } = ctx
    const existing = await newUser(ctx.srv.url, PASSWORD)
    await page.getByRole('link', { name: 'Sign up' }).first().click()
    await heading(page, 'Sign up')
    await page.getByLabel('Username').fill(existing.username)
    await page.getByLabel('Display name').fill('Web Tester')
    await page.getByLabel('Password').fill('short')
    await page.getByRole('button', { name: 'Create account' }).click()
    assert.match(await errorOf(page, 'Password'), /8/)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Create account' }).click()
    assert.is(await errorOf(page, 'Username'), 'This username is taken. Choose another one.')
    await assertAccessible(page, 'sign up with errors')
    await screenshot(page, 'sign-up-errors')
    await page.getByLabel('Username').fill(ctx.username)
    await page.getByRole('button', { name: 'Create account' }).click()
    await heading(page, 'Your links')
    await page.getByText('You have no links yet.').waitFor()
    assert.is(new URL(page.url()).pathname, '/app/links')
  })

  test('create: a taken code shows under the code field; a custom code and an expiry make the link', async (ctx) => {
    const { page } = ctx
    const other = await newUser(ctx.srv.url, PASSWORD)
    const taken = await call(ctx.srv.url, 'POST', '/api/v1/links', { token: other.token, body: { url: 'https://example.org/', code: `T${ctx.code.slice(1)}` } })
    assert.is(taken.status, 201)
    await page.getByRole('link', { name: 'New link' }).first().click()
    await heading(page, 'New link')
    await page.getByLabel('URL').fill('https://example.com/docs?from=app')
    await page.getByLabel('Custom code').fill(taken.body.code)
    await page.getByLabel('Expiry').fill('2031-05-04T12:30')
    await page.getByRole('button', { name: 'Create link' }).click()
    assert.match(await errorOf(page, 'Custom code'), /in use or was used before/)
    await page.getByLabel('Custom code').fill('bad!')
    await page.getByRole('button', { name: 'Create link' }).click()
    assert.ok((await errorOf(page, 'Custom code')).length > 0)
    await assertAccessible(page, 'create with errors')
    await screenshot(page, 'create')
    await page.getByLabel('Custom code').fill(ctx.code)
    await page.getByRole('button', { name: 'Create link' }).click()
    await heading(page, ctx.code)
    await page.getByText(`Created ${ctx.srv.service.deps.baseUrl}/r/${ctx.code}.`).waitFor()
    const link = await call(ctx.srv.url, 'GET', `/api/v1/links/${ctx.code}`, { token: await tabToken(page) })
    assert.is(link.body.url, 'https://example.com/docs?from=app')
    assert.is(link.body.expires_at, new Date('2031-05-04T12:30').toISOString())
  })

  test('the list shows the short URL with a copy button, target, visits, a sparkline, created and expiry', async (ctx) => {
    const { page } = ctx
    // Two visits, one by a person and one by a bot, counted within a flush (about a second).
    // The person comes from 8.8.8.8 (the test server trusts 127.0.0.1 as a proxy), which the bundled database places in the US.
    await fetch(`${ctx.srv.url}/r/${ctx.code}`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux) Firefox/130.0', referer: 'https://news.example.net/item', 'x-forwarded-for': '8.8.8.8' } })
    await fetch(`${ctx.srv.url}/r/${ctx.code}`, { redirect: 'manual', headers: { 'user-agent': 'Googlebot/2.1' } })
    const token = await tabToken(page)
    await until(5_000, async () => (await call(ctx.srv.url, 'GET', `/api/v1/links/${ctx.code}`, { token })).body.visits === 2)
    await page.getByRole('link', { name: 'Links', exact: true }).click()
    await heading(page, 'Your links')
    const card = page.locator('li.link-card', { hasText: ctx.code })
    await card.getByText('https://example.com/docs?from=app').waitFor()
    await card.locator('svg.sparkline').waitFor()
    assert.match((await card.locator('svg.sparkline').getAttribute('aria-label')) ?? '', /^2 visits in the last 30 days$/)
    assert.match(await card.innerText(), /Visits\s+2/i) // (the label is shown in capitals)
    assert.match(await card.innerText(), /Expires .*2031/)
    assert.match(await card.innerText(), /Created/i)
    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
    assert.is(csv.suggestedFilename(), 'links.csv')
    const rows = readFileSync((await csv.path())!, 'utf8').split('\r\n')
    assert.is(rows[0], 'code,url,short_url,created_at,updated_at,visits,last_visited_at,expires_at,disabled,starts_at,max_visits,visits_left,password_protected,health')
    assert.ok(rows.some((r) => r.startsWith(`${ctx.code},https://example.com/docs?from=app,`)), rows.join('\n'))
    await card.getByRole('button', { name: `Copy short URL ${ctx.code}` }).click()
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor()
    assert.is(await page.evaluate('navigator.clipboard.readText()'), `${ctx.srv.service.deps.baseUrl}/r/${ctx.code}`)
    await assertAccessible(page, 'links list')
    await screenshot(page, 'links')
  })

  test('edit shows an invalid URL under its field, then changes the URL and removes the expiry', async (ctx) => {
    const { page } = ctx
    await page.getByRole('link', { name: `Edit ${ctx.code}` }).click()
    await heading(page, `Edit ${ctx.code}`)
    assert.is(await page.getByLabel('URL').inputValue(), 'https://example.com/docs?from=app')
    await page.getByLabel('URL').fill('ftp://example.com/')
    await page.getByRole('button', { name: 'Save changes' }).click()
    assert.match(await errorOf(page, 'URL'), /http/)
    await screenshot(page, 'edit')
    await page.getByLabel('URL').fill('https://example.com/changed')
    await page.getByLabel('Expiry').fill('')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByText('Saved. Redirects use the change at once.').waitFor()
    const link = await call(ctx.srv.url, 'GET', `/api/v1/links/${ctx.code}`, { token: await tabToken(page) })
    assert.equal([link.body.url, link.body.expires_at], ['https://example.com/changed', null])
  })

  test("the link's page charts visits per day (humans and bots), who visits (device, browser, OS, country), lists referrers, downloads its statistics as CSV and its QR code", async (ctx) => {
    const { page } = ctx
    await heading(page, ctx.code)
    await page.getByText('2 visits: 1 by people, 1 by bots and link previews.').waitFor()
    const chart = page.getByRole('img', { name: /^Visits per day/ })
    assert.match((await chart.getAttribute('aria-label')) ?? '', /2 in all/)
    assert.is(await page.locator('svg.day-chart rect.humans').count(), 30)
    await page.getByText('Show the days as a table').click()
    assert.is(await page.getByRole('table', { name: 'Visits per day' }).locator('tbody tr').count(), 30)
    // the breakdowns: a chart each, its text alternative naming every bar, and a table view
    const breakdowns: Array<[string, string]> = [['Devices', 'Desktop'], ['Browsers', 'Firefox'], ['Operating systems', 'Linux'], ['Countries', 'United States (US)']]
    for (const [name, value] of breakdowns) {
      const bars = page.getByRole('list', { name })
      assert.equal(await bars.getByRole('listitem').allInnerTexts(), [`${value}\n1 visit, 100%`], name)
    }
    await page.getByText('Show countries as a table').click()
    assert.match(await page.getByRole('table', { name: 'Countries, visits by people' }).innerText(), /United States \(US\)\s+1\s+100%/)
    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download statistics (CSV)' }).click()])
    assert.match(csv.suggestedFilename(), new RegExp(`^${ctx.code}-\\d{4}-\\d{2}-\\d{2}-\\d{4}-\\d{2}-\\d{2}\\.csv$`))
    const lines = readFileSync((await csv.path())!, 'utf8').trimEnd().split('\r\n')
    assert.is(lines.length, 31, 'a header and one row per day')
    assert.is(lines[0], 'date,visits,humans,bots,uniques,device:desktop,browser:Firefox,os:Linux,country:US')
    assert.match(lines.at(-1)!, /^\d{4}-\d{2}-\d{2},2,1,1,1,1,1,1,1$/)
    const referrers = await page.locator('ol.referrers').innerText()
    assert.match(referrers, /news\.example\.net\s+1/)
    assert.match(referrers, /Direct \(no referrer\)\s+1/)
    const qr = page.getByRole('img', { name: `QR code of ${ctx.srv.service.deps.baseUrl}/r/${ctx.code}` })
    await qr.waitFor()
    assert.ok(await qr.evaluate((img: { complete: boolean; naturalWidth: number }) => img.complete && img.naturalWidth > 0), 'the QR image shows')
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download QR code (SVG)' }).click()])
    assert.is(download.suggestedFilename(), `${ctx.code}.svg`)
    assert.match(readFileSync((await download.path())!, 'utf8'), /^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
    await assertAccessible(page, 'link page')
    await screenshot(page, 'link')
  })

  test('create with a password, a visit limit, a preview card and tags: each error shows under its field, a folded one unfolded, then the link page shows them', async (ctx) => {
    const { page } = ctx
    await page.getByRole('link', { name: 'New link' }).first().click()
    await heading(page, 'New link')
    const more = page.locator('details.more', { hasText: 'More options' })
    assert.is(await more.evaluate((d: { open: boolean }) => d.open), false, 'the options start folded')
    await page.getByLabel('URL').fill('https://example.com/launch-notes')
    await page.getByLabel('Tags').fill('Launch, docs, ,launch')
    await page.getByText('More options').click()
    await page.getByLabel('Password', { exact: true }).fill('short')
    await page.getByLabel('Visit limit').fill('0')
    await page.getByLabel('Title').fill('Launch notes')
    await page.getByLabel('Image', { exact: true }).fill('http://example.com/card.png')
    await page.getByText('More options').click()
    await page.getByRole('button', { name: 'Create link' }).click()
    assert.match(await errorOf(page, 'Password'), /at least 8/)
    assert.is(await more.evaluate((d: { open: boolean }) => d.open), true, 'an error unfolds the options')
    assert.match(await errorOf(page, 'Visit limit'), /./)
    assert.match(await errorOf(page, 'Image'), /https/)
    assert.is(await page.evaluate('document.activeElement?.name'), 'password', 'the first field in error has the focus')
    await assertAccessible(page, 'create with options and errors')
    await screenshot(page, 'create-options-errors')
    await page.getByLabel('Password', { exact: true }).fill('a long link password')
    await page.getByLabel('Visit limit').fill('3')
    await page.getByLabel('Image', { exact: true }).fill('https://example.com/card.png')
    await page.getByRole('button', { name: 'Create link' }).click()
    await page.getByText(/^Created /).waitFor()
    ctx.tagged = new URL(page.url()).pathname.split('/').at(-1)!
    const link = await call(ctx.srv.url, 'GET', `/api/v1/links/${ctx.tagged}`, { token: await tabToken(page) })
    assert.equal(
      [link.body.url, link.body.password_protected, link.body.max_visits, link.body.visits_left, link.body.tags, link.body.title, link.body.description, link.body.image_url, link.body.starts_at],
      ['https://example.com/launch-notes', true, 3, 3, ['Launch', 'docs'], 'Launch notes', null, 'https://example.com/card.png', null],
    )
    const facts = await page.locator('.panel dl.facts').innerText()
    assert.match(facts, /Visit limit\s+3 of 3 left/i)
    assert.match(facts, /Password\s+Required/i)
    assert.equal(await page.getByRole('list', { name: `Tags of ${ctx.tagged}` }).getByRole('listitem').allInnerTexts(), ['Launch', 'docs'])
    assert.match(await page.getByRole('region', { name: 'Preview card' }).innerText(), /Launch notes[\s\S]*https:\/\/example\.com\/card\.png/)
    assert.ok(!(await page.content()).includes('a long link password'), 'the password is never shown')
  })

  test('the list shows tag chips and filters by tag (fed by GET /tags) and by search, kept in the address over a reload', async (ctx) => {
    const { page } = ctx
    await page.getByRole('link', { name: 'Links', exact: true }).click()
    await heading(page, 'Your links')
    await page.getByText('2 of 50 links').waitFor()
    const cards = page.locator('li.link-card')
    assert.is(await cards.count(), 2)
    assert.equal(await cards.filter({ hasText: ctx.tagged }).getByRole('list', { name: `Tags of ${ctx.tagged}` }).getByRole('listitem').allInnerTexts(), ['Launch', 'docs'])
    assert.equal(await page.getByLabel('Tag', { exact: true }).locator('option').allInnerTexts(), ['All tags', 'docs (1)', 'Launch (1)'])
    await page.getByLabel('Tag', { exact: true }).selectOption('Launch')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL((u) => u.search === '?tag=Launch')
    await page.getByText('1 link matches').waitFor()
    assert.equal(await cards.locator('a.code').allInnerTexts(), [`${ctx.srv.service.deps.baseUrl}/r/${ctx.tagged}`])
    await page.reload()
    await page.getByText('1 link matches').waitFor()
    assert.is(await page.getByLabel('Tag', { exact: true }).inputValue(), 'Launch', 'a reload keeps the tag')
    await page.getByRole('link', { name: 'Clear' }).click()
    await page.getByText('2 of 50 links').waitFor()
    await page.getByLabel('Search').fill('CHANGED')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL((u) => u.search === '?q=CHANGED')
    await page.getByText('1 link matches').waitFor()
    assert.equal(await cards.locator('a.code').allInnerTexts(), [`${ctx.srv.service.deps.baseUrl}/r/${ctx.code}`])
    await page.reload()
    await page.getByText('1 link matches').waitFor()
    assert.is(await page.getByLabel('Search').inputValue(), 'CHANGED', 'a reload keeps the search')
    await page.getByLabel('Search').fill('nothing-like-this')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.getByText('No link matches this filter.').waitFor()
    await page.getByRole('link', { name: 'Show all links' }).click()
    await page.getByText('2 of 50 links').waitFor()
    await page.getByRole('link', { name: 'Links tagged docs' }).click()
    await page.waitForURL((u) => u.search === '?tag=docs')
    await page.getByText('1 link matches').waitFor()
    assert.is(await page.getByLabel('Tag', { exact: true }).inputValue(), 'docs')
    await assertAccessible(page, 'links filtered by tag')
    await screenshot(page, 'links-filtered')
  })

  test('edit never shows the password, can remove it, changes the tags and the limit, and shows a tags error under its field', async (ctx) => {
    const { page } = ctx
    await page.goto(app(ctx, `links/${ctx.tagged}/edit`))
    await heading(page, `Edit ${ctx.tagged}`)
    assert.is(await page.locator('details.more', { hasText: 'More options' }).evaluate((d: { open: boolean }) => d.open), true, 'a link with options shows them')
    assert.is(await page.getByLabel('New password').inputValue(), '')
    assert.is(await page.getByLabel('Tags').inputValue(), 'Launch, docs')
    assert.is(await page.getByLabel('Visit limit').inputValue(), '3')
    await page.getByLabel('Tags').fill(Array.from({ length: 11 }, (_, i) => `t${i}`).join(', '))
    await page.getByRole('button', { name: 'Save changes' }).click()
    assert.match(await errorOf(page, 'Tags'), /at most 10/)
    await assertAccessible(page, 'edit with options and an error')
    await screenshot(page, 'edit-options-errors')
    await page.getByLabel('Tags').fill('docs')
    await page.getByLabel('Visit limit').fill('')
    await page.getByLabel('Remove the password').check()
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByText('Saved. Redirects use the change at once.').waitFor()
    const link = await call(ctx.srv.url, 'GET', `/api/v1/links/${ctx.tagged}`, { token: await tabToken(page) })
    assert.equal([link.body.password_protected, link.body.tags, link.body.max_visits, link.body.title], [false, ['docs'], null, 'Launch notes'])
    assert.match(await page.locator('.panel dl.facts').innerText(), /Password\s+None/i)
  })

  test('sessions: ending one removes it, ending all others leaves only this one', async (ctx) => {
    const { page } = ctx
    const others = await Promise.all([1, 2, 3].map(() => login(ctx.srv.url, ctx.username, PASSWORD)))
    await page.getByRole('link', { name: 'Sessions' }).click()
    await heading(page, 'Sessions')
    const cards = page.locator('li.session-card')
    await until(3_000, async () => (await cards.count()) === 4)
    await assertAccessible(page, 'sessions')
    await screenshot(page, 'sessions')
    await cards.getByRole('button', { name: /^End the session started/ }).first().click()
    await page.getByText('Session ended.').waitFor()
    assert.is(await cards.count(), 3)
    await page.getByRole('button', { name: 'End all other sessions' }).click()
    await page.getByText('Ended 2 other sessions.').waitFor()
    assert.is(await cards.count(), 1)
    assert.is(await page.getByRole('button', { name: 'End all other sessions' }).isDisabled(), true)
    for (const token of others) assert.is((await call(ctx.srv.url, 'GET', '/api/v1/users/me', { token })).status, 401)
  })

  test('account: the display name is saved, a wrong current password shows under its field, the password changes', async (ctx) => {
    const { page } = ctx
    await page.getByRole('link', { name: 'Account' }).click()
    await heading(page, 'Account')
    await page.getByRole('textbox', { name: 'Display name' }).fill('Web Tester Two')
    await page.getByRole('button', { name: 'Save name' }).click()
    await page.getByRole('status').filter({ hasText: 'Display name saved: Web Tester Two' }).waitFor()
    await page.getByLabel('Current password').fill('not my password')
    await page.getByLabel('New password', { exact: true }).fill('a brand new password')
    await page.getByLabel('Repeat the new password').fill('a brand new password')
    await page.getByRole('button', { name: 'Change password' }).click()
    assert.is(await errorOf(page, 'Current password'), 'The current password is incorrect.')
    await assertAccessible(page, 'account')
    await screenshot(page, 'account')
    await page.getByLabel('Current password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor()
    const me = await call(ctx.srv.url, 'GET', '/api/v1/users/me', { token: await login(ctx.srv.url, ctx.username, 'a brand new password') })
    assert.is(me.body.display_name, 'Web Tester Two')
  })

  test('a 401 returns to sign-in and, signed in again, to the same screen with what was typed', async (ctx) => {
    const { page } = ctx
    await page.getByRole('link', { name: 'New link' }).first().click()
    await heading(page, 'New link')
    await page.getByLabel('URL').fill('https://example.com/typed-before-401')
    await page.getByLabel('Custom code').fill('Keep1234')
    // The tab's session ends elsewhere (another device ends every other session).
    const elsewhere = await login(ctx.srv.url, ctx.username, 'a brand new password')
    assert.is((await call(ctx.srv.url, 'DELETE', '/api/v1/auth/sessions', { token: elsewhere })).status, 204)
    await page.getByRole('button', { name: 'Create link' }).click()
    await heading(page, 'Sign in')
    await page.getByText('Your session has ended. Sign in again to continue where you were.').waitFor()
    assert.is(await tabToken(page), undefined)
    await page.getByLabel('Username').fill(ctx.username)
    await page.getByLabel('Password').fill('a brand new password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await heading(page, 'New link')
    assert.is(new URL(page.url()).pathname, '/app/links/new')
    assert.is(await page.getByLabel('URL').inputValue(), 'https://example.com/typed-before-401')
    assert.is(await page.getByLabel('Custom code').inputValue(), 'Keep1234')
  })

  test('deleting a link asks first: Escape or Cancel keeps it, Delete link removes it', async (ctx) => {
    const { page } = ctx
    await page.getByRole('link', { name: 'Links', exact: true }).click()
    await heading(page, 'Your links')
    await page.getByRole('button', { name: `Delete ${ctx.code}` }).click()
    const dialog = page.getByRole('dialog', { name: `Delete ${ctx.code}?` })
    await dialog.waitFor()
    assert.is(await page.evaluate('document.activeElement.textContent'), 'Cancel', 'focus starts on Cancel')
    await assertAccessible(page, 'delete dialog')
    await screenshot(page, 'delete-confirm')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    await page.getByRole('button', { name: `Delete ${ctx.code}` }).click()
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'detached' })
    assert.is((await call(ctx.srv.url, 'GET', `/api/v1/links/${ctx.code}`, { token: await tabToken(page) })).status, 200)
    await page.getByRole('button', { name: `Delete ${ctx.code}` }).click()
    await dialog.getByRole('button', { name: 'Delete link' }).click()
    await page.getByText(`Deleted ${ctx.code}.`).waitFor()
    assert.is((await call(ctx.srv.url, 'GET', `/api/v1/links/${ctx.code}`, { token: await tabToken(page) })).status, 404)
  })

  test('a link can be made and opened with the keyboard alone, and focus is always visible', async (ctx) => {
    const { page } = ctx
    await page.goto(app(ctx, 'links/new'))
    await heading(page, 'New link')
    await page.keyboard.press('Tab') // the skip link comes first
    assert.is(await page.evaluate('document.activeElement.textContent'), 'Skip to content')
    const focusRing = () => page.evaluate('getComputedStyle(document.activeElement).outlineStyle')
    assert.not.equal(await focusRing(), 'none')
    await page.getByLabel('URL').focus()
    await page.keyboard.type('https://example.com/keyboard')
    await page.keyboard.press('Tab')
    assert.is(await page.evaluate('document.activeElement.name'), 'code')
    assert.not.equal(await focusRing(), 'none')
    await page.keyboard.press('Enter')
    await page.getByText(/^Created /).waitFor()
    await page.getByRole('link', { name: 'Download QR code (SVG)' }).waitFor()
  })

  test('a 429 counts down from Retry-After next to the button, then lets the person try again', async (ctx) => {
    const { page } = ctx
    await page.getByRole('button', { name: 'Sign out' }).click()
    await heading(page, 'Sign in')
    await page.getByLabel('Username').fill(ctx.username)
    await page.getByLabel('Password').fill('a brand new password')
    // Empty the bucket of this address (the browser's, 127.0.0.1) from the test.
    await Promise.all(Array.from({ length: 8 }, () => fetch(`${ctx.srv.url}/api/v1/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then((r) => r.arrayBuffer())))
    const button = page.getByRole('button', { name: 'Sign in' })
    await button.click()
    const alert = page.getByRole('alert').filter({ hasText: /Too many attempts\. Try again in \d+ s\./ })
    await alert.waitFor()
    assert.ok(await button.isDisabled())
    await screenshot(page, 'rate-limited')
    await page.getByText('You can try again now.').waitFor({ timeout: 5_000 })
    assert.not.ok(await button.isDisabled())
    await button.click()
    await heading(page, 'Your links')
  })

  // The abuse controls, as the app shows them: a disabled link says so, offers no Edit, and
  // the API's 403 LINK_DISABLED for an edit shows as a message next to the form
  test('a link the operator disabled shows as disabled, without Edit, and an edit is refused with a message', async (ctx) => {
    const { page } = ctx
    const token = await tabToken(page)
    const made = await call(ctx.srv.url, 'POST', '/api/v1/links', { token, body: { url: 'https://example.com/stopped' } })
    const code = (made.body as { code: string }).code
    assert.ok(await disableLink(ctx.srv.service.db.sql, code, 'phishing'))
    await page.goto(app(ctx, 'links'))
    await heading(page, 'Your links')
    const card = page.getByRole('listitem').filter({ hasText: `/r/${code}` })
    await card.getByText('Disabled by the operator').waitFor()
    assert.is(await card.getByRole('link', { name: `Edit ${code}` }).count(), 0)
    await page.goto(app(ctx, `links/${code}/edit`))
    await page.getByRole('button', { name: /Save/ }).click()
    await page.getByText('The operator has disabled this link: it cannot be changed, only deleted.').waitFor()
  })

  test('a destination host in Unicode shows its punycode beside it, in the list and on the link\'s page, and the other way round', async (ctx) => {
    const { page } = ctx
    const token = await tabToken(page)
    const idn = (await call(ctx.srv.url, 'POST', '/api/v1/links', { token, body: { url: 'https://bücher.example/angebote' } })).body.code as string
    const puny = (await call(ctx.srv.url, 'POST', '/api/v1/links', { token, body: { url: 'https://xn--80ak6aa92e.example/login' } })).body.code as string
    await page.goto(app(ctx, 'links'))
    await heading(page, 'Your links')
    const card = (code: string) => page.locator('li.link-card', { hasText: `/r/${code}` })
    assert.is((await card(idn).locator('p.host').innerText()).trim(), 'Host bücher.example, punycode xn--bcher-kva.example')
    assert.is((await card(puny).locator('p.host').innerText()).trim(), 'Host аррӏе.example, punycode xn--80ak6aa92e.example')
    assert.is(await card(ctx.code).locator('p.host').count(), 0, 'an ASCII host shows no second form')
    await assertAccessible(page, 'links list with IDN hosts')
    await screenshot(page, 'links-idn')
    await page.goto(app(ctx, `links/${puny}`))
    await heading(page, puny)
    await page.locator('p.host', { hasText: 'punycode xn--80ak6aa92e.example' }).waitFor()
    await screenshot(page, 'link-idn')
    for (const code of [idn, puny]) await call(ctx.srv.url, 'DELETE', `/api/v1/links/${code}`, { token })
  })

  test('sign out ends the session on the server and returns to sign-in', async (ctx) => {
    const { page } = ctx
    const token = await tabToken(page)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByText('You have signed out.').waitFor()
    assert.is(await tabToken(page), undefined)
    assert.is((await call(ctx.srv.url, 'GET', '/api/v1/users/me', { token })).status, 401)
    assert.equal(ctx.problems, [], 'no script error and no CSP refusal during the journey')
  })

  test('Report a link works without an account: the link comes filled in, each error shows by its field, the report is stored', async (ctx) => {
    const { page } = ctx
    const owner = await newUser(ctx.srv.url)
    const code = (await call(ctx.srv.url, 'POST', '/api/v1/links', { token: owner.token, body: { url: 'https://login.bank.example/' } })).body.code as string
    await page.goto(app(ctx, `report?code=${code}`))
    await heading(page, 'Report a link')
    assert.is(await page.getByLabel('Short link', { exact: true }).inputValue(), `${ctx.srv.service.deps.baseUrl}/r/${code}`)
    await page.getByRole('button', { name: 'Send report' }).click()
    await page.locator('#report-reason-error', { hasText: 'Is required.' }).waitFor()
    await assertAccessible(page, 'report form with an error')
    await screenshot(page, 'report-errors')
    await page.getByLabel(/^Phishing/).check()
    await page.getByLabel('Details').fill('It asks for my bank password.')
    await page.getByRole('button', { name: 'Send report' }).click()
    await heading(page, 'Report sent')
    await screenshot(page, 'report-sent')
    const [row] = await ctx.srv.service.db.sql<{ reason: string; details: string }[]>`select reason, details from reports where code = ${code}`
    assert.equal({ ...row }, { reason: 'phishing', details: 'It asks for my bank password.' })
    await page.getByRole('link', { name: 'Report another link' }).click()
    await page.getByLabel('Short link', { exact: true }).fill('Zz9Zz9Zz')
    await page.getByLabel(/^Spam/).check()
    await page.getByRole('button', { name: 'Send report' }).click()
    assert.is(await errorOf(page, 'Short link'), 'There is no such link: check what you typed.')
    assert.equal(ctx.problems.filter((p) => !/status of 404/.test(p)), [], 'no script error and no CSP refusal')
  })

  test.run()

  // Usable at 360 px and on a desktop, light and dark, no serious accessibility issue
  const sizes = serverSuite<{ browser: Browser; user: User; code: string; options: string }>('web app in Chromium: every screen at 360 and 1280 px, light and dark')

  sizes.before(async (ctx) => {
    ctx.browser = await launchBrowser()
    ctx.user = await newUser(ctx.srv.url, PASSWORD)
    const link = await call(ctx.srv.url, 'POST', '/api/v1/links', { token: ctx.user.token, body: { url: 'https://example.com/a/rather/long/path/that/must/not/widen/the/page?with=query&and=more', expires_at: '2030-01-31T12:00:00Z' } })
    ctx.code = link.body.code
    await call(ctx.srv.url, 'POST', '/api/v1/links', { token: ctx.user.token, body: { url: 'https://example.org/' } })
    const options = await call(ctx.srv.url, 'POST', '/api/v1/links', {
      token: ctx.user.token,
      body: {
        url: 'https://example.net/spring-sale',
        password: 'a long link password',
        max_visits: 100,
        starts_at: '2029-01-01T09:00:00Z',
        tags: ['Spring sale 2026', 'newsletter', 'a-rather-long-tag-of-32-chars-xx'],
        title: 'Spring sale: every plant at half price until the end of the month',
        description: 'A description long enough to wrap on a phone, so the card shows how it breaks across lines without widening the page.',
        image_url: 'https://example.net/images/spring-sale-card-1200x630.png',
      },
    })
    assert.is(options.status, 201)
    ctx.options = options.body.code
    const visitors: Array<[string, string]> = [
      ['Mozilla/5.0 (X11; Linux) Firefox/130.0', '8.8.8.8'],
      ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', '193.0.0.1'],
    ]
    for (const [ua, ip] of visitors) {
      await fetch(`${ctx.srv.url}/r/${ctx.code}`, { redirect: 'manual', headers: { 'user-agent': ua, 'x-forwarded-for': ip } })
    }
    await until(5_000, async () => (await call(ctx.srv.url, 'GET', `/api/v1/links/${ctx.code}/stats`, { token: ctx.user.token })).body.countries.length === 2)
  })

  sizes.after(async (ctx) => {
    await ctx.browser?.close()
  })

  sizes('every screen passes axe-core and fits the width without sideways scrolling', async (ctx) => {
    const screens: Array<[string, string]> = [
      ['links', '/app/links'],
      ['link', `/app/links/${ctx.code}`],
      ['create', '/app/links/new'],
      ['edit', `/app/links/${ctx.code}/edit`],
      ['links-filtered', '/app/links?tag=newsletter&q=example'],
      ['link-options', `/app/links/${ctx.options}`],
      ['edit-options', `/app/links/${ctx.options}/edit`],
      ['sessions', '/app/sessions'],
      ['account', '/app/account'],
      ['report', `/app/report?code=${ctx.code}`],
    ]
    for (const width of [360, 1280]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        const token = await login(ctx.srv.url, ctx.user.username, PASSWORD)
        const context = await signedInContext(ctx.browser, token, { viewport: { width, height: 800 }, colorScheme })
        const page = await context.newPage()
        const problems: string[] = []
        watch(page, problems)
        for (const [name, path] of screens) {
          await page.goto(ctx.srv.url + path)
          await page.locator('main h1').waitFor()
          await page.waitForLoadState('networkidle')
          const where = `${name} at ${width} px, ${colorScheme}`
          await assertAccessible(page, where)
          const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')
          assert.is(overflow, 0, `${where}: no sideways scrolling`)
          await screenshot(page, `${name}-${width}-${colorScheme}`)
        }
        await context.close()
        assert.equal(problems, [], `${width} px ${colorScheme}: no script error`)
      }
    }
  })

  sizes('the pages a browser gets for a link that does not redirect, and the preview: axe-core, no sideways scrolling, no script, nothing fetched from elsewhere', async (ctx) => {
    const token = ctx.user.token
    const make = async (url: string) => (await call(ctx.srv.url, 'POST', '/api/v1/links', { token, body: { url } })).body.code as string
    const disabled = await make('https://example.com/stopped')
    await disableLink(ctx.srv.service.db.sql, disabled, 'spam')
    const host = `${uniqueName('phish')}.example`
    const blocked = await make(`https://login.${host}/`)
    await blockHost(ctx.srv.service.db.sql, host)
    const previewed = await make('https://xn--80ak6aa92e.example/sign-in')
    ctx.srv.service.deps.cache.clear()
    const pages: Array<[string, string, number]> = [
      ['visitor-unknown', '/r/Zz9Zz9Zz', 404],
      ['visitor-disabled', `/r/${disabled}`, 410],
      ['visitor-blocked', `/r/${blocked}`, 410],
      ['visitor-preview', `/r/${previewed}/preview`, 200],
    ]
    for (const width of [360, 1280]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        const context = await ctx.browser.newContext({ viewport: { width, height: 800 }, colorScheme })
        const page = await context.newPage()
        const problems: string[] = []
        watch(page, problems)
        const requested: string[] = []
        page.on('request', (r) => requested.push(r.url()))
        for (const [name, path, status] of pages) {
          requested.length = 0
          const res = await page.goto(ctx.srv.url + path)
          assert.is(res?.status(), status, path)
          await page.waitForLoadState('networkidle')
          const where = `${name} at ${width} px, ${colorScheme}`
          await assertAccessible(page, where)
          assert.is(await page.evaluate('document.scripts.length'), 0, `${where}: no script`)
          assert.is(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), 0, `${where}: no sideways scrolling`)
          // The page itself, and at most the browser's own try for a favicon on this origin.
          assert.equal(requested.filter((u) => u !== ctx.srv.url + path && u !== `${ctx.srv.url}/favicon.ico`), [], `${where}: nothing else fetched`)
          await screenshot(page, `${name}-${width}-${colorScheme}`)
        }
        const blockedText = await (await page.goto(`${ctx.srv.url}/r/${blocked}`))!.text()
        assert.not.ok(blockedText.includes(host), 'a blocked destination is never shown')
        await context.close()
        assert.equal(problems.filter((p) => !/status of (404|410)/.test(p)), [], `${width} px ${colorScheme}: no CSP refusal, no error`)
      }
    }
    await unblockHost(ctx.srv.service.db.sql, host)
  })

  sizes('a password link opens in Chromium: the form posts to /r/{code}/unlock, a wrong password shows it again, the right one lands on the destination, counted once', async (ctx) => {
    // The destination on another origin, as a link's usually is: the page's form-action must let the 302 through.
    const landing = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html lang="en"><title>Landed</title><h1>Landed</h1></html>'))
    await new Promise<void>((resolve) => landing.listen(0, '127.0.0.1', resolve))
    try {
      const destination = `http://127.0.0.1:${(landing.address() as AddressInfo).port}/landed`
      const made = await call(ctx.srv.url, 'POST', '/api/v1/links', { token: ctx.user.token, body: { url: destination, password: 'open sesame' } })
      const code = made.body.code as string
      for (const width of [360, 1280]) {
        const context = await ctx.browser.newContext({ viewport: { width, height: 800 } })
        const page = await context.newPage()
        const problems: string[] = []
        watch(page, problems)
        assert.is((await page.goto(`${ctx.srv.url}/r/${code}`))?.status(), 401)
        await assertAccessible(page, `visitor-password at ${width} px`)
        await screenshot(page, `visitor-password-${width}-light`)
        await page.getByLabel('Password').fill('not the password')
        await Promise.all([page.waitForURL(`${ctx.srv.url}/r/${code}/unlock`), page.getByRole('button', { name: 'Open the link' }).click()])
        assert.match((await page.locator('#password-error').textContent()) ?? '', /not right/)
        await assertAccessible(page, `visitor-password, wrong, at ${width} px`)
        await page.getByLabel('Password').fill('open sesame')
        await Promise.all([page.waitForURL(destination), page.getByRole('button', { name: 'Open the link' }).click()])
        await page.getByRole('heading', { name: 'Landed' }).waitFor()
        await context.close()
        assert.equal(problems.filter((p) => !/status of (401)/.test(p)), [], `${width} px: no CSP refusal, no error`)
      }
      await ctx.srv.service.deps.visits.flush()
      const link = await call(ctx.srv.url, 'GET', `/api/v1/links/${code}`, { token: ctx.user.token })
      assert.is(link.body.visits, 2, 'one visit for each right password, none for the form or the wrong one')
    } finally {
      landing.close()
    }
  })

  sizes('signed out, sign-in and sign-up pass axe-core at 360 px in the dark', async (ctx) => {
    const context = await ctx.browser.newContext({ viewport: { width: 360, height: 740 }, colorScheme: 'dark' })
    const page = await context.newPage()
    for (const path of ['/app/signin', '/app/signup', '/app/report']) {
      await page.goto(ctx.srv.url + path)
      await page.locator('main h1').waitFor()
      await assertAccessible(page, `${path} at 360 px, dark`)
      await screenshot(page, `${path.slice(5)}-360-dark`)
    }
    await context.close()
  })

  sizes.run()
}
