// The breakdowns' pure parts: User-Agent families (bowser) and their keys, a record's country in
// either MMDB shape, the fold's memo, and CSV cells (RFC 4180, OWASP formula escaping).
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { csvCell, toCsv, wantsCsv } from '../../src/http/csv.js'
import { Breakdowns, dimKey, MAX_PARSES, splitDimKey } from '../../src/stats/breakdowns.js'
import { countryOfRecord, openCountries } from '../../src/stats/geo.js'
import { createLogger } from '../../src/log.js'
import { Memo } from '../../src/stats/memo.js'
import { agentDevice, agentFamilies } from '../../src/stats/user-agent.js'

const agents = suite('User-Agent families')

agents('devices, browser and OS families people know; what bowser does not know is "other"', () => {
  const cases: Array<[string, string, string, string]> = [
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', 'mobile', 'Safari', 'iOS'],
    ['Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1', 'tablet', 'Safari', 'iOS'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36', 'mobile', 'Chrome', 'Android'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36 Edg/126.0', 'desktop', 'Edge', 'Windows'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15', 'desktop', 'Safari', 'macOS'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0', 'desktop', 'Firefox', 'Linux'],
    ['Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0 Mobile Safari/537.36', 'mobile', 'Samsung Internet', 'Android'],
    ['Mozilla/5.0 (Plan9) Acme/1.0', 'other', 'other', 'other'],
    ['', 'other', 'other', 'other'],
  ]
  for (const [ua, device, browser, os] of cases) assert.equal(agentFamilies(ua), { device, browser, os }, ua)
})

agents('a made-up first word is not a browser family (no value of the visitor’s choosing is stored)', () => {
  assert.is(agentFamilies('Evil-Name-Of-Any-Length/1.0 (X11)').browser, 'other')
})

agents('a redirect rule\'s reading of the device and OS (agentDevice, without the browser) is the statistics\' for every agent', () => {
  const corpus = [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
    'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36',
    'Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
    'Mozilla/5.0 (Windows Phone 10.0; Android 6.0.1; Microsoft; Lumia 950) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/52.0 Mobile Safari/537.36 Edge/15.15063',
    'Mozilla/5.0 (Linux; U; Android 4.0.3; en-us; KFTT Build/IML74K) AppleWebKit/537.36 (KHTML, like Gecko) Silk/3.68 like Chrome/39.0 Safari/537.36',
    'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36 Edg/126.0',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
    'Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0',
    'Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0 TV Safari/537.36',
    'Mozilla/5.0 (PlayStation; PlayStation 5/2.26) AppleWebKit/605.1.15 (KHTML, like Gecko)',
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
    'curl/8.5.0',
    'Evil-Name-Of-Any-Length/1.0 (X11)',
    `Mozilla/5.0 (${'x'.repeat(600)}; iPhone; CPU iPhone OS 17_5 like Mac OS X)`,
    '',
  ]
  for (const ua of corpus) {
    const { device, os } = agentFamilies(ua)
    assert.equal(agentDevice(ua), { device, os }, ua)
  }
})

const geo = suite('country of an MMDB record')

geo('ip-location-db records ({country_code}) and MaxMind GeoLite2 records ({country: {iso_code}}) both give the code', () => {
  assert.is(countryOfRecord({ country_code: 'US' } as never), 'US')
  assert.is(countryOfRecord({ country: { iso_code: 'de' } } as never), 'DE')
  assert.is(countryOfRecord({ registered_country: { iso_code: 'FR' } } as never), 'FR')
  assert.is(countryOfRecord(null), 'unknown')
  assert.is(countryOfRecord({ country_code: 'not a code' } as never), 'unknown')
})

geo('the bundled database places a known range; GEO_DB=off and an unreadable file leave every country unknown', async () => {
  const lines: string[] = []
  const log = createLogger('warn', (line) => lines.push(line))
  const bundled = await openCountries(undefined, log)
  assert.equal(['8.8.8.8', '::ffff:8.8.8.8', '2001:4860:4860::8888', '10.0.0.1', 'not an address'].map(bundled), ['US', 'US', 'US', 'unknown', 'unknown'])
  assert.is((await openCountries('off', log))('8.8.8.8'), 'unknown')
  assert.is((await openCountries('/nonexistent/GeoLite2-Country.mmdb', log))('8.8.8.8'), 'unknown')
  log.flush()
  assert.ok(lines.some((l) => l.includes('country database cannot be read') && l.includes('/nonexistent/GeoLite2-Country.mmdb')), lines.join('\n'))
})

// Issue 22: the file is read at the first lookup, so one that is there but damaged is found then
geo('a GEO_DB file that is not a country database leaves every country unknown and says so at the first lookup', async () => {
  const lines: string[] = []
  const log = createLogger('warn', (line) => lines.push(line))
  const dir = await mkdtemp(join(tmpdir(), 'geo-'))
  const file = join(dir, 'damaged.mmdb')
  await writeFile(file, 'not a MaxMind database')
  try {
    const countryOf = await openCountries(file, log)
    log.flush()
    assert.is(lines.length, 0, 'nothing read yet')
    assert.equal(['8.8.8.8', '1.1.1.1'].map(countryOf), ['unknown', 'unknown'])
    log.flush()
    assert.is(lines.filter((l) => l.includes('country database cannot be read') && l.includes(file)).length, 1, lines.join('\n'))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

geo('a visit is counted under its country\'s key; each address is looked up once while remembered, and none is kept once told to forget', () => {
  const asked: string[] = []
  const b = new Breakdowns((a) => (asked.push(a), a.startsWith('8.') ? 'US' : 'unknown'))
  assert.equal(['8.8.8.8', '10.0.0.1', '8.8.8.8'].map((a) => splitDimKey(b.countryKey(a))), [['country', 'US'], ['country', 'unknown'], ['country', 'US']])
  assert.equal(asked, ['8.8.8.8', '10.0.0.1'], 'looked up once while remembered')
  b.forgetAddresses()
  b.countryKey('8.8.8.8')
  assert.equal(asked, ['8.8.8.8', '10.0.0.1', '8.8.8.8'])
})

agents('a User-Agent\'s keys are its device, browser and OS families, the same strings each time', () => {
  const b = new Breakdowns(() => 'unknown')
  const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0'
  assert.equal(b.agentKeys(firefox).map(splitDimKey), [['device', 'desktop'], ['browser', 'Firefox'], ['os', 'Linux']])
  assert.is(b.agentKeys(firefox), b.agentKeys(firefox), 'remembered')
  assert.ok([dimKey('os', 'Linux'), dimKey('browser', 'Firefox'), dimKey('device', 'desktop')].sort()[0]!.startsWith('browser\t'), 'keys sort by dimension first')
})

agents(`past ${MAX_PARSES.toLocaleString('en')} new User-Agents between takes, more count as "other" unparsed; those remembered keep their families`, () => {
  const b = new Breakdowns(() => 'unknown')
  const known = 'Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0'
  for (let i = 1; i < MAX_PARSES; i++) b.agentKeys(`${known} build/${i}`)
  b.agentKeys(known) // the last parse allowed
  assert.equal(b.agentKeys(`${known} new`).map(splitDimKey), [['device', 'other'], ['browser', 'other'], ['os', 'other']])
  assert.equal(b.agentKeys(known).map(splitDimKey)[1], ['browser', 'Firefox'])
  b.forgetAddresses()
  assert.equal(b.agentKeys(`${known} new`).map(splitDimKey)[1], ['browser', 'Firefox'], 'parsed again after the take')
})

const memo = suite('flush memo')

memo('a key used within the last max/2 new keys is kept, one not used for max new keys is made again; never more than max kept', () => {
  const m = new Memo<number>(4)
  const made: string[] = []
  const make = (k: string) => (made.push(k), k.length)
  for (const k of ['a', 'b', 'c', 'd']) m.get(k, make)
  m.get('a', make) // used again within two new keys: kept
  m.get('e', make)
  m.get('a', make)
  assert.equal(made, ['a', 'b', 'c', 'd', 'e'])
  assert.ok(m.size <= 4)
  for (const k of ['f', 'g', 'h', 'i']) m.get(k, make)
  m.get('b', make) // not used for more than four new keys
  assert.equal(made, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'b'])
  assert.ok(m.size <= 4)
})

const csv = suite('CSV cells')

csv('RFC 4180: a cell with a comma, quote or line break is quoted, quotes doubled; numbers as numbers', () => {
  assert.is(toCsv([['a,b', 'say "hi"', 'two\nlines', 'plain', 42, null]]), '"a,b","say ""hi""","two\nlines",plain,42,\r\n')
})

csv('OWASP: a text cell starting with =, +, -, @, tab or CR gets a leading apostrophe', () => {
  for (const cell of ['=1+2', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) assert.ok(csvCell(cell).replace(/^"/, '').startsWith(`'${cell[0]}`), cell)
  assert.is(csvCell('=A1,B1'), `"'=A1,B1"`)
  assert.is(csvCell(-1), '-1', 'a number is not text')
})

csv('?format wins over Accept; Accept: text/csv alone asks for CSV', () => {
  assert.ok(wantsCsv(undefined, 'text/csv'))
  assert.ok(wantsCsv(undefined, 'application/json, text/csv;q=0.5'))
  assert.not.ok(wantsCsv(undefined, 'text/csvx'))
  assert.not.ok(wantsCsv('json', 'text/csv'))
  assert.ok(wantsCsv('csv', 'application/json'))
})

agents.run()
geo.run()
memo.run()
csv.run()
