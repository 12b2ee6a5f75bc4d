// When a refresh keeps the last good list: a feed that answers garbage with 200 (an empty body,
// "Forbidden", an error page, a file cut short) must not unblock what the list held.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parseFeed } from '../../src/blocklist/parse.js'
import { refusalOf } from '../../src/blocklist/refresh.js'

const hosts = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `0.0.0.0 h${from + i}.example`).join('\n')

test('an empty body, "Forbidden", or garbage is refused where a list was loaded', async () => {
  assert.equal((refusalOf(await parseFeed(''), 1_000_000))?.reason, 'empty')
  assert.equal((refusalOf(await parseFeed('Forbidden'), 1_000_000))?.reason, 'invalid', 'a single label is no host (a public suffix)')
  const garbage = Array.from({ length: 5_000 }, (_, i) => `${i % 7 === 0 ? `x${i}.example` : `<div class="c${i}">${'%$'.repeat(i % 50)}</div>`}`).join('\n')
  const parsed = await parseFeed(garbage)
  assert.ok(parsed.hosts.size > 0, 'some garbage looks like a host')
  assert.equal(refusalOf(parsed, 1_000_000)?.reason, 'invalid')
  // The first load of a source: an empty feed is an empty list, not an error.
  assert.is(refusalOf(await parseFeed(''), 0), undefined)
})

test('a list that would lose more than half its entries (and at least 100) is refused; ordinary churn is not', async () => {
  assert.match(refusalOf(await parseFeed(hosts(300_000)), 1_000_000)!.message, /shrink the list from 1000000 to 300000 entries/)
  assert.is(refusalOf(await parseFeed(hosts(600_000)), 1_000_000), undefined)
  assert.is(refusalOf(await parseFeed(hosts(1)), 4), undefined, 'a small list may shrink')
  assert.is(refusalOf(await parseFeed(hosts(90)), 200)?.reason, 'shrink')
  assert.is(refusalOf(await parseFeed(`${hosts(10)}\nnot a host!\nnor this`), 10), undefined, 'a few invalid lines are the usual')
})

test.run()
