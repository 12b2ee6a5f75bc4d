// Redirect rules (src/links/rules.ts): the device, the language and the first matching rule.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { deviceOf, languageOf, ruleTarget, type CachedRule } from '../../src/links/rules.js'

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
const IPAD = 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1'
const ANDROID_TABLET = 'Mozilla/5.0 (Linux; Android 13; SM-X200) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36'
const MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15'
const WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36'

test('device: iPhone and iPad are ios, an Android tablet android, Mac and Windows desktop, no agent or curl none', () => {
  assert.equal([IPHONE, IPAD, ANDROID_TABLET, MAC, WINDOWS].map(deviceOf), ['ios', 'ios', 'android', 'desktop', 'desktop'])
  assert.is(deviceOf(undefined), undefined)
  assert.is(deviceOf(''), undefined)
  assert.is(deviceOf('curl/8.5.0'), undefined)
})

test('device: only a User-Agent\'s first 512 characters are read (8 KB of noise would cost a millisecond a request): an iPhone named past them is not seen', () => {
  assert.is(deviceOf(IPHONE + ' '.repeat(600)), 'ios')
  assert.is(deviceOf(`Mozilla/5.0 (${'x'.repeat(600)}; iPhone; CPU iPhone OS 17_5 like Mac OS X)`), undefined)
})

test('language: the primary subtag of the highest-q entry, the first of equals; * and q=0 never', () => {
  assert.is(languageOf('de-CH, en;q=0.5'), 'de')
  assert.is(languageOf('en;q=0.4, FR-fr;q=0.9, de;q=0.8'), 'fr')
  assert.is(languageOf('en-GB,de'), 'en')
  assert.is(languageOf('*, de;q=0.1'), 'de')
  assert.is(languageOf('de;q=0'), undefined)
  assert.is(languageOf(''), undefined)
  assert.is(languageOf(undefined), undefined)
  assert.is(languageOf('x-klingon, 12'), undefined)
})

test('the first rule whose conditions all match wins; the country is looked up only when a rule asks', () => {
  let lookups = 0
  const asker = (userAgent: string | undefined, acceptLanguage: string | undefined, country = 'US') => ({ userAgent, acceptLanguage, country: () => (lookups++, country) })
  const rules: CachedRule[] = [
    { if: { device: 'ios', language: 'de' }, location: 'a' },
    { if: { device: 'ios' }, location: 'b' },
    { if: { country: 'DE' }, location: 'c' },
  ]
  assert.is(ruleTarget(rules, asker(IPHONE, 'de')), 'a')
  assert.is(ruleTarget(rules, asker(IPHONE, 'en')), 'b')
  assert.is(lookups, 0)
  assert.is(ruleTarget(rules, asker(MAC, 'de', 'DE')), 'c')
  assert.is(ruleTarget(rules, asker(MAC, 'de', 'FR')), undefined)
  assert.is(lookups, 2)
})

test.run()
