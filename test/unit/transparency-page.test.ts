// The transparency page's figures in the visitor's language: durations in words of two units at
// most, months by name, counts with the language's grouping (all by Intl).
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { duration, monthName, transparencyPage } from '../../src/transparency/page.js'
import { messagesFor } from '../../src/web/catalogues.js'

const [en, de, fr, ar] = ['en', 'de', 'fr', 'ar'].map((lang) => messagesFor(lang))

test('a time to action shows its two largest units in words of the language, or the catalogue\'s "none"', () => {
  assert.is(duration(42, en!), '42 seconds')
  assert.is(duration(3_700, en!), '1 hour 1 minute')
  assert.is(duration(93_784, en!), '1 day 2 hours')
  assert.is(duration(0, en!), '0 seconds')
  assert.match(duration(93_784, de!), /^1 Tag,? 2 Stunden$/)
  assert.match(duration(7_260, fr!), /^2\sheures\s1\sminute$/)
  assert.match(duration(3_600, ar!), /ساعة/)
  assert.is(duration(null, de!), de!.t('transparency.none'))
})

test('a month is named in the language, a capital first; counts are grouped as the language groups them', () => {
  assert.is(monthName('2026-01', en!), 'January 2026')
  assert.is(monthName('2026-11', de!), 'November 2026')
  assert.is(monthName('2026-11', fr!), 'Novembre 2026')
  const html = transparencyPage([{ month: '2026-03', reports_received: 12_345, reports_resolved: 0, time_to_action_median_seconds: 90, time_to_action_p90_seconds: null, links_stopped_by_operator: 0, links_stopped_by_threat_feeds: 0, links_stopped_by_health_checks: 0, accounts_disabled: 0 }], de!)
  assert.match(html, /<dd>12\.345<\/dd>/)
  assert.match(html, /<time datetime="2026-03">März 2026<\/time>/)
  assert.match(html, /<dd>1 Minute,? 30 Sekunden<\/dd>/)
})

test.run()
