// What an instance publishes about itself: /.well-known/security.txt (RFC 9116) from
// SECURITY_CONTACT, the transparency report (on by default), and /blocklist.txt (off by default).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { loadConfig, ConfigError } from '../../src/config.js'
import { call } from '../helpers/api.js'
import { serverSuite, startServer } from '../helpers/server.js'

const withContact = serverSuite('security.txt with SECURITY_CONTACT', {
  SECURITY_CONTACT: 'mailto:security@example.com',
  SECURITY_POLICY_URL: 'https://example.com/security-policy',
  SECURITY_LANGUAGES: 'en,de',
  BASE_URL: 'https://sho.rt',
})

withContact('security.txt has Contact, an Expires within a year at a UTC midnight, Preferred-Languages, Canonical from BASE_URL and Policy', async ({ srv }) => {
  const res = await call(srv.url, 'GET', '/.well-known/security.txt')
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), 'text/plain; charset=utf-8')
  const fields = Object.fromEntries(res.text.trim().split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]))
  assert.equal(Object.keys(fields), ['Contact', 'Expires', 'Preferred-Languages', 'Canonical', 'Policy'])
  assert.is(fields.Contact, 'mailto:security@example.com')
  assert.match(fields.Expires!, /^\d{4}-\d{2}-\d{2}T00:00:00Z$/)
  const ahead = Date.parse(fields.Expires!) - Date.now()
  assert.ok(ahead > 300 * 86_400_000 && ahead < 365 * 86_400_000, `Expires ${fields.Expires} is not some 360 days ahead`)
  assert.is(fields['Preferred-Languages'], 'en, de')
  assert.is(fields.Canonical, 'https://sho.rt/.well-known/security.txt')
  assert.is(fields.Policy, 'https://example.com/security-policy')
})

withContact.run()

const defaults = serverSuite('published pages on the defaults')

defaults('without SECURITY_CONTACT security.txt is 404 ROUTE_NOT_FOUND; /blocklist.txt is off by default', async ({ srv }) => {
  for (const path of ['/.well-known/security.txt', '/blocklist.txt']) {
    const res = await call(srv.url, 'GET', path)
    assert.equal([res.status, res.body.code], [404, 'ROUTE_NOT_FOUND'], path)
  }
})

defaults('the transparency report is on by default: twelve months, this one last (of zeros on a new instance), as JSON and as a page', async ({ srv }) => {
  const res = await call(srv.url, 'GET', '/transparency.json')
  assert.is(res.status, 200)
  const months = res.body.months
  assert.is(months.length, 12)
  assert.is(months[11].month, new Date().toISOString().slice(0, 7))
  assert.ok(months.every((m: { month: string }, i: number) => i === 0 || m.month > months[i - 1].month), 'oldest first')
  // On PostgreSQL the tests share one database: other suites' reports are counted there.
  if (process.env.DATABASE_URL === undefined) assert.equal(months[11], {
    month: months[11].month,
    reports_received: 0,
    reports_resolved: 0,
    time_to_action_median_seconds: null,
    time_to_action_p90_seconds: null,
    links_stopped_by_operator: 0,
    links_stopped_by_threat_feeds: 0,
    links_stopped_by_health_checks: 0,
    accounts_disabled: 0,
  })
  const page = await call(srv.url, 'GET', '/transparency')
  assert.is(page.status, 200)
  assert.match(page.headers.get('content-type')!, /^text\/html/)
  assert.match(page.headers.get('content-security-policy')!, /default-src 'none'/)
  assert.match(page.text, /<html lang="en" dir="ltr">/)
  assert.match(page.text, /<h1>Transparency report<\/h1>/)
  assert.is(page.text.match(/<h2 id="m-\d{4}-\d{2}"><time datetime="\d{4}-\d{2}">[A-Z][a-z]+ \d{4}<\/time><\/h2>/g)?.length, 12)
})

defaults('the transparency page speaks the visitor\'s language (Accept-Language): German with lang="de", Arabic right to left; the JSON stays as it is', async ({ srv }) => {
  const de = await call(srv.url, 'GET', '/transparency', { headers: { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' } })
  assert.is(de.status, 200)
  assert.match(de.text, /<html lang="de" dir="ltr">/)
  assert.match(de.text, /<h1>Transparenzbericht<\/h1>/)
  assert.match(de.text, /<dt>Eingegangene Meldungen<\/dt>/)
  assert.not.match(de.text, /Reports received/)
  const month = new Date().toISOString().slice(0, 7)
  const germanMonth = new Intl.DateTimeFormat('de', { year: 'numeric', month: 'long', timeZone: 'UTC' }).format(Date.parse(`${month}-01T00:00:00Z`))
  assert.ok(de.text.includes(`<time datetime="${month}">${germanMonth}</time>`), `this month as ${germanMonth}`)
  assert.is(de.headers.get('content-language'), 'de')
  assert.match(de.headers.get('vary')!, /\bAccept-Language\b/)

  const ar = await call(srv.url, 'GET', '/transparency', { headers: { 'accept-language': 'ar' } })
  assert.match(ar.text, /<html lang="ar" dir="rtl">/)
  assert.match(ar.text, /<h1>تقرير الشفافية<\/h1>/)
  assert.is(ar.headers.get('content-language'), 'ar')

  const json = await call(srv.url, 'GET', '/transparency.json', { headers: { 'accept-language': 'de' } })
  assert.equal([json.status, json.headers.get('content-language'), Object.keys(json.body.months[0])[1]], [200, null, 'reports_received'])
})

defaults.run()

const off = suite('TRANSPARENCY=off')

off('TRANSPARENCY=off: both routes are 404 ROUTE_NOT_FOUND', async () => {
  const srv = await startServer({ TRANSPARENCY: 'off' })
  try {
    for (const path of ['/transparency', '/transparency.json']) {
      const res = await call(srv.url, 'GET', path)
      assert.equal([res.status, res.body.code], [404, 'ROUTE_NOT_FOUND'], path)
    }
  } finally {
    await srv.close()
  }
})

off('SECURITY_CONTACT must be a mailto:, https:// or tel: URI, checked at start', () => {
  for (const bad of ['security@example.com', 'http://example.com/report', 'javascript:alert(1)', 'mailto:nobody']) {
    assert.throws(() => loadConfig({ SECURITY_CONTACT: bad }), (e: unknown) => e instanceof ConfigError, bad)
  }
  for (const good of ['mailto:security@example.com', 'https://example.com/report', 'tel:+1-201-555-0123']) {
    assert.is(loadConfig({ SECURITY_CONTACT: good }).trust.securityContact, good)
  }
  assert.equal([loadConfig({}).trust.transparency, loadConfig({}).trust.publicBlocklist, loadConfig({}).trust.securityLanguages], [true, false, 'en'])
})

off.run()
