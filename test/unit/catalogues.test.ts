// The catalogues of locales/ (src/web/catalogues.ts): each language has exactly English's keys,
// with the same placeholders and its own plural forms; Accept-Language picks among them; and every
// word of a visitor page comes from one (a page rendered in a pseudo-language has no other text).
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { FALLBACK, messagesFor, messagesOf, pickLanguage, readCatalogues, type Catalogue, type Message } from '../../src/web/catalogues.js'
import { monthName, transparencyPage } from '../../src/transparency/page.js'
import { cardPage, passwordPage, previewPage, stoppedPage, type StoppedKind } from '../../src/web/visitor-pages.js'

const CATALOGUES = readCatalogues()
const ENGLISH = CATALOGUES.get(FALLBACK)!
const SECTIONS = ['page', 'app'] as const
const placeholders = (m: Message) => [...new Set((typeof m === 'string' ? [m] : Object.values(m)).flatMap((text) => [...text!.matchAll(/\{(\w+)\}/g)].map((x) => x[1])))].sort()

test('the six languages are there, English first among equals as the fallback; Arabic alone is right-to-left', () => {
  assert.equal([...CATALOGUES.keys()].sort(), ['ar', 'de', 'en', 'es', 'fr', 'ja'])
  for (const [lang, c] of CATALOGUES) assert.is(c.language.dir, lang === 'ar' ? 'rtl' : 'ltr', lang)
})

test('every catalogue has every key of English and no other, in both sections', () => {
  for (const [lang, c] of CATALOGUES) {
    for (const section of SECTIONS) {
      const keys = Object.keys(c[section]).sort()
      const expected = Object.keys(ENGLISH[section]).sort()
      assert.equal(keys.filter((k) => !expected.includes(k)), [], `${lang}.json ${section}: keys English does not have`)
      assert.equal(expected.filter((k) => !keys.includes(k)), [], `${lang}.json ${section}: keys missing`)
    }
  }
})

test('each message keeps English\'s placeholders, is not empty, and a plural one has "other" and only its language\'s forms', () => {
  for (const [lang, c] of CATALOGUES) {
    const forms = new Set<string>(new Intl.PluralRules(lang).resolvedOptions().pluralCategories)
    for (const section of SECTIONS) {
      for (const [key, message] of Object.entries(c[section] as Catalogue['page'])) {
        const where = `${lang}.json ${section} ${key}`
        assert.equal(placeholders(message), placeholders(ENGLISH[section][key]!), `${where}: placeholders`)
        assert.is(typeof message === 'string', typeof ENGLISH[section][key] === 'string', `${where}: plural as in English`)
        if (typeof message === 'string') assert.ok(message.trim() !== '', `${where} is empty`)
        else {
          assert.ok(typeof message.other === 'string' && message.other !== '', `${where} has no "other"`)
          assert.equal(Object.keys(message).filter((f) => !forms.has(f)), [], `${where}: forms ${lang} does not have`)
        }
      }
    }
  }
})

test('Accept-Language: q-values, order, a region falls back to its language, English when none is there', () => {
  const all = new Set(CATALOGUES.keys())
  for (const [header, lang] of [
    [undefined, 'en'],
    ['', 'en'],
    ['de', 'de'],
    ['de-CH', 'de'],
    ['DE-at;q=0.9', 'de'],
    ['fr;q=0.4, ar;q=0.8, *;q=0.1', 'ar'],
    ['pt-BR, pt;q=0.9, es;q=0.5', 'es'],
    ['ja, en;q=0.5', 'ja'],
    ['ja;q=0, fr', 'fr'],
    ['zh-Hant, *', 'en'],
    ['ja;q=nonsense, es', 'es'],
    ['en-GB, de', 'en'],
    [',,;q=1,de', 'de'],
  ] as Array<[string | undefined, string]>) {
    assert.is(pickLanguage(header, all), lang, String(header))
  }
  assert.is(messagesFor('ar-EG').dir, 'rtl')
  assert.is(messagesFor('de').t('password.wait', { count: 1 }), 'Zu viele Versuche. Warten Sie 1 Sekunde und versuchen Sie es dann noch einmal.')
  assert.match(messagesFor('ar').t('password.wait', { count: 2 }), /ثانيتين/)
})

/** A language whose every message is its key in brackets, placeholders kept: any other word on a page came from somewhere else. */
function pseudo(): Catalogue {
  const mark = (key: string, m: Message): Message => {
    const text = `⟦${key}⟧${placeholders(m).map((p) => `{${p}}`).join('')}`
    return typeof m === 'string' ? text : { other: text }
  }
  return { ...ENGLISH, page: Object.fromEntries(Object.entries(ENGLISH.page).map(([k, m]) => [k, mark(k, m)])) }
}

test('every word of every visitor page and the transparency page comes from the catalogue (rendered in a pseudo-language, nothing else is left)', () => {
  const m = messagesOf('qps', pseudo())
  const code = 'aZ3kP9qR'
  const values = [code, 'https://sho.rt/r/aZ3kP9qR', 'https://xn--80ak6aa92e.example/login', 'аррӏе.example', 'xn--80ak6aa92e.example', 'Card title', 'Card text', 'Link Service']
  const pages: Array<[string, string]> = [
    ...(['unknown', 'expired', 'exhausted', 'disabled', 'suspended', 'blocked', 'flagged'] satisfies StoppedKind[]).map((k): [string, string] => [k, stoppedPage(k, code, '/app/report', m).html]),
    ['password', passwordPage(code, 'unlock', { kind: 'ask' }, m)],
    ['password wrong', passwordPage(code, 'unlock', { kind: 'wrong' }, m)],
    ['password wait', passwordPage(code, 'unlock', { kind: 'wait', seconds: 7 }, m)],
    ['preview', previewPage(code, values[1]!, values[2]!, '/app/report', m)],
    ['card', cardPage(values[1]!, values[2]!, { title: 'Card title', description: 'Card text', imageUrl: null }, m)],
    ['transparency', transparencyPage([{ month: '2026-11', reports_received: 3, reports_resolved: 2, time_to_action_median_seconds: null, time_to_action_p90_seconds: null, links_stopped_by_operator: 1, links_stopped_by_threat_feeds: 0, links_stopped_by_health_checks: 0, accounts_disabled: 0 }], m)],
  ]
  values.push(monthName('2026-11', m)) // Intl's, in the page's language
  for (const [name, html] of pages) {
    assert.match(html, /<html lang="qps" dir="ltr">/, name)
    let text = html.replace(/<style>[\s\S]*?<\/style>/, '').replace(/<meta [^>]*>/g, '').replace(/<[^>]+>/g, ' ').replace(/&#39;|&quot;|&amp;|&lt;|&gt;/g, ' ')
    for (const v of [...values].sort((a, b) => b.length - a.length)) text = text.split(v).join(' ')
    text = text.replace(/⟦[\w.]+⟧/g, ' ')
    assert.is(text.replace(/[\s\d()·:.,!?-]+/g, ''), '', `${name}: text not from the catalogue`)
    // and no attribute a person reads carries words of its own
    assert.not.match(html, /\s(aria-label|title|placeholder|alt)="/, name)
  }
})

test('a message with markup around it: the message escaped, the values put in as given', () => {
  const m = messagesOf('xx', { ...ENGLISH, page: { ...ENGLISH.page, 'stopped.report': 'A <b> & {link}.' } })
  assert.is(m.t('stopped.report', { link: '<a href="/x">x</a>' }, (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')), 'A &lt;b&gt; &amp; <a href="/x">x</a>.')
})

test.run()
