// The web app's Webhooks screen and the New link screen's many-at-once paste, in Chromium against
// a real server and a local receiver: each screen scanned by axe-core at 1280 and 360 px, light and
// dark, and photographed (build/screenshots). Skipped, with a plain line saying so, where Chromium
// is not installed.
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import * as assert from 'uvu/assert'
import { call, newLink, newUser, type User } from '../helpers/api.js'
import { assertAccessible, browserAvailable, launchBrowser, screenshot, signedInContext } from '../helpers/browser.js'
import { Receiver } from '../helpers/receiver.js'
import { serverSuite } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

const ENV = {
  WEBHOOK_ALLOW_HTTP: 'on',
  WEBHOOK_ALLOW_PRIVATE: 'on',
  // One retry a second later, then failed: a receiver answering 500 makes a failed delivery at once.
  WEBHOOK_RETRY_SCHEDULE: '1',
  WEBHOOK_POLL_MS: '200',
}

interface Ctx {
  browser: Browser
  context: BrowserContext
  page: Page
  user: User
  rx: Receiver
  /** messages the page logged as errors, CSP refusals included */
  problems: string[]
  secret: string
}

const heading = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor()

function watch(page: Page, problems: string[]): void {
  page.on('console', (m) => {
    // A 4xx the app asked for on purpose is logged by Chromium as a failed resource; those are expected.
    if (m.type() === 'error' && !/status of (409|422)/.test(m.text())) problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(e.message))
}

/** The error line that describes this input (aria-describedby), once shown, and the input marked invalid. */
async function errorOf(page: Page, label: string): Promise<string> {
  const input = page.getByLabel(label, { exact: true })
  const id = ((await input.getAttribute('aria-describedby')) ?? '').split(' ').find((s) => s.endsWith('-error'))!
  const line = page.locator(`[id="${id}"]`)
  await line.waitFor({ state: 'visible' })
  assert.is(await input.getAttribute('aria-invalid'), 'true')
  return (await line.textContent()) ?? ''
}

if (browserAvailable()) {
  const test = serverSuite<Ctx>('web app in Chromium: webhooks and bulk create', ENV)

  test.before(async (ctx) => {
    ctx.browser = await launchBrowser()
    ctx.user = await newUser(ctx.srv.url)
    ctx.rx = await new Receiver().start()
    ctx.context = await signedInContext(ctx.browser, ctx.user.token)
    await ctx.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.srv.service.deps.baseUrl })
    ctx.page = await ctx.context.newPage()
    ctx.problems = []
    watch(ctx.page, ctx.problems)
  })

  test.after(async (ctx) => {
    await ctx.browser?.close()
    await ctx.rx?.stop()
  })

  // The browser stays on BASE_URL's origin: sessionStorage belongs to one origin.
  const app = (ctx: Ctx & { srv: { service: { deps: { baseUrl: string } } } }, path: string) => `${ctx.srv.service.deps.baseUrl}/app/${path}`

  test('Webhooks is in the navigation; adding an endpoint shows each field error, then its whsec_ secret once, with a copy button', async (ctx) => {
    const { page, rx } = ctx
    await page.goto(app(ctx, 'links'))
    await heading(page, 'Your links')
    await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click()
    await heading(page, 'Webhooks')
    await page.getByText('No webhooks yet.').waitFor()
    await page.getByLabel('Endpoint URL').fill('ftp://example.com/hook')
    for (const box of await page.getByRole('checkbox').all()) await box.uncheck()
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    assert.match(await errorOf(page, 'Endpoint URL'), /http/)
    await page.locator('#events-error', { hasText: /at least one event/ }).waitFor()
    await assertAccessible(page, 'webhooks with errors')
    await screenshot(page, 'webhooks-errors')
    await page.getByLabel('Endpoint URL').fill(rx.url)
    await page.getByRole('checkbox', { name: /^link\.created/ }).check()
    await page.getByRole('checkbox', { name: /^link\.deleted/ }).check()
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await page.getByText(`Added ${rx.url}.`).waitFor()
    const secret = (await page.locator('.secret code').textContent()) ?? ''
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    ctx.secret = secret
    await assertAccessible(page, 'webhooks with the new secret')
    await screenshot(page, 'webhooks-secret')
    await page.getByRole('button', { name: `Copy the secret of ${rx.url}` }).click()
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor()
    assert.is(await page.evaluate('navigator.clipboard.readText()'), secret)
    const [hook] = (await call(ctx.srv.url, 'GET', '/api/v1/webhooks', { token: ctx.user.token })).body.webhooks
    assert.equal(hook.events, ['link.created', 'link.deleted'])
    // What the receiver gets verifies with the secret the screen showed.
    const link = await newLink(ctx.srv.url, ctx.user.token)
    await until(5_000, () => rx.of('link.created').some((r) => r.event.data.code === link.code))
    const got = rx.of('link.created').find((r) => r.event.data.code === link.code)!
    new Webhook(secret).verify(got.body, { 'webhook-id': got.headers['webhook-id'] as string, 'webhook-timestamp': got.headers['webhook-timestamp'] as string, 'webhook-signature': got.headers['webhook-signature'] as string })
    // Shown once: not after a reload.
    await page.reload()
    await heading(page, 'Webhooks')
    await page.locator('li.hook-card', { hasText: rx.url }).waitFor()
    assert.not.ok((await page.content()).includes(secret))
  })

  test('send test reaches the receiver; a failing delivery lists its attempts, and Retry now sends it again', async (ctx) => {
    const { page, rx } = ctx
    const card = page.locator('li.hook-card', { hasText: rx.url })
    await card.getByRole('button', { name: `Send test to ${rx.url}` }).click()
    await page.getByRole('status').filter({ hasText: 'Test event queued' }).waitFor()
    await until(5_000, () => rx.of('webhook.test').length === 1)
    rx.status = 500
    await card.getByRole('link', { name: `Deliveries of ${rx.url}` }).click()
    await heading(page, 'Deliveries')
    await page.getByRole('button', { name: `Send test to ${rx.url}` }).click()
    await page.getByText('Test event queued.').waitFor()
    const failed = page.locator('li.delivery-card', { hasText: 'Failed, no retries left' })
    await until(10_000, async () => {
      if ((await failed.count()) > 0) return true
      await page.getByRole('button', { name: 'Refresh' }).click()
      await page.locator('main h1').waitFor()
      return false
    })
    assert.equal(await failed.locator('tbody tr td:nth-child(2)').allInnerTexts(), ['answered 500', 'answered 500'])
    assert.match(await failed.locator('tbody tr td:nth-child(3)').first().innerText(), /^\d+ ms$/)
    const states = await page.locator('li.delivery-card > p:nth-child(2)').allInnerTexts()
    assert.equal(states.filter((s) => s === 'Delivered').length, 2, `the first test and the link.created were delivered: ${states.join(' | ')}`)
    await assertAccessible(page, 'deliveries')
    await screenshot(page, 'deliveries')
    rx.status = 200
    await failed.getByRole('button', { name: /^Retry now: webhook\.test/ }).click()
    await page.getByText('Sending webhook.test again.').waitFor()
    await until(5_000, () => rx.of('webhook.test').length === 2)
    assert.equal(ctx.problems, [])
  })

  test('Turn off stops an endpoint and says so; Turn on starts it again', async (ctx) => {
    const { page, rx } = ctx
    await page.getByRole('link', { name: 'Back to webhooks' }).click()
    await heading(page, 'Webhooks')
    await page.getByRole('button', { name: `Turn off ${rx.url}` }).click()
    await page.getByText(`Turned off ${rx.url}.`).waitFor()
    const card = page.locator('li.hook-card', { hasText: rx.url })
    assert.match(await card.innerText(), /State\s+Off/i)
    assert.is((await call(ctx.srv.url, 'GET', '/api/v1/webhooks', { token: ctx.user.token })).body.webhooks[0].enabled, false)
    await page.getByRole('button', { name: `Turn on ${rx.url}` }).click()
    await page.getByText(`Turned on ${rx.url}.`).waitFor()
    assert.is((await call(ctx.srv.url, 'GET', '/api/v1/webhooks', { token: ctx.user.token })).body.webhooks[0].enabled, true)
  })

  test('with 5 endpoints the form gives way to a note; deleting asks first, and then removes one', async (ctx) => {
    const { page } = ctx
    for (let i = 1; i <= 4; i++) {
      const res = await call(ctx.srv.url, 'POST', '/api/v1/webhooks', { token: ctx.user.token, body: { url: `https://hooks${i}.example.com/in`, events: ['link.clicked'] } })
      assert.is(res.status, 201)
    }
    await page.reload()
    await heading(page, 'Webhooks')
    await page.getByText('You have 5 webhooks, the most an account may have.').waitFor()
    assert.is(await page.getByRole('button', { name: 'Add endpoint' }).count(), 0)
    await page.getByRole('button', { name: 'Delete https://hooks4.example.com/in' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete this webhook?' })
    await dialog.waitFor()
    await assertAccessible(page, 'delete webhook dialog')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'detached' })
    assert.is((await call(ctx.srv.url, 'GET', '/api/v1/webhooks', { token: ctx.user.token })).body.webhooks.length, 5)
    await page.getByRole('button', { name: 'Delete https://hooks4.example.com/in' }).click()
    await dialog.getByRole('button', { name: 'Delete webhook' }).click()
    await page.getByText('Deleted https://hooks4.example.com/in.').waitFor()
    assert.is((await call(ctx.srv.url, 'GET', '/api/v1/webhooks', { token: ctx.user.token })).body.webhooks.length, 4)
    await page.getByRole('button', { name: 'Add endpoint' }).waitFor()
  })

  test('New link takes many URLs at once, one per line: each line gets its short link (with a copy button) or why not', async (ctx) => {
    const { page } = ctx
    const before = (await call(ctx.srv.url, 'GET', '/api/v1/links', { token: ctx.user.token })).body.links.length
    await page.getByRole('navigation').getByRole('link', { name: 'New link' }).click()
    await heading(page, 'New link')
    const lines = page.getByLabel('Addresses, one per line')
    await lines.fill(Array.from({ length: 51 }, (_, i) => `https://example.com/${i}`).join('\n'))
    await page.getByRole('button', { name: 'Create these links' }).click()
    assert.match(await errorOf(page, 'Addresses, one per line'), /At most 50 URLs at once; there are 51/)
    await lines.fill('https://example.com/one\n\n  https://example.com/two  \nnot a url\nhttps://example.com/three\n')
    await page.getByRole('button', { name: 'Create these links' }).click()
    const results = page.getByRole('list', { name: 'Results, one per line' }).getByRole('listitem')
    await until(5_000, async () => (await results.count()) === 4)
    const texts = await results.allInnerTexts()
    assert.match(texts[0]!, /^https:\/\/example\.com\/one\s+\S+\/r\/[0-9A-Za-z]{8}\s+Copy$/)
    assert.match(texts[1]!, /^https:\/\/example\.com\/two\s/)
    assert.match(texts[2]!, /^not a url\s+Not created: URL: Must not contain white space/, texts[2])
    assert.match(texts[3]!, /^https:\/\/example\.com\/three\s/)
    await page.getByRole('status').filter({ hasText: 'Created 3 links of 4.' }).waitFor()
    const links = (await call(ctx.srv.url, 'GET', '/api/v1/links', { token: ctx.user.token })).body.links
    assert.is(links.length, before + 3)
    const one = links.find((l: { url: string }) => l.url === 'https://example.com/one')
    assert.ok(texts[0]!.includes(one.short_url))
    await results.first().getByRole('button', { name: `Copy short URL ${one.code}` }).click()
    assert.is(await page.evaluate('navigator.clipboard.readText()'), one.short_url)
    await assertAccessible(page, 'new link with bulk results')
    await screenshot(page, 'bulk')
    await results.first().getByRole('link').click()
    await heading(page, one.code)
    assert.equal(ctx.problems, [], 'no script error and no CSP refusal')
  })

  test('the webhooks, deliveries and New link screens pass axe-core and fit 360 and 1280 px, light and dark', async (ctx) => {
    const [hook] = (await call(ctx.srv.url, 'GET', '/api/v1/webhooks', { token: ctx.user.token })).body.webhooks
    const screens: Array<[string, string]> = [
      ['webhooks', '/app/webhooks'],
      ['deliveries', `/app/webhooks/${hook.id}`],
      ['create-bulk', '/app/links/new'],
    ]
    for (const width of [360, 1280]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        const context = await signedInContext(ctx.browser, ctx.user.token, { viewport: { width, height: 800 }, colorScheme })
        const page = await context.newPage()
        const problems: string[] = []
        watch(page, problems)
        for (const [name, path] of screens) {
          await page.goto(ctx.srv.url + path)
          await page.locator('main h1').waitFor()
          await page.waitForLoadState('networkidle')
          if (name === 'create-bulk') {
            await page.getByLabel('Addresses, one per line').fill('https://example.com/a/rather/long/path/that/must/not/widen/the/page?with=query&and=more\nnot a url')
            await page.getByRole('button', { name: 'Create these links' }).click()
            await page.getByText(/^Not created/).waitFor()
          }
          const where = `${name} at ${width} px, ${colorScheme}`
          await assertAccessible(page, where)
          assert.is(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), 0, `${where}: no sideways scrolling`)
          await screenshot(page, `${name}-${width}-${colorScheme}`)
        }
        await context.close()
        assert.equal(problems, [], `${width} px ${colorScheme}: no script error`)
      }
    }
  })

  test.run()
}
