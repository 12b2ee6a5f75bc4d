// The configuration of a public instance: threat feeds, creation limits, reports.
import { resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ConfigError, loadConfig } from '../../src/config.js'

test('defaults: no feeds, refreshed hourly; 60 creates at once, refilled at 30 a minute; new accounts and suspension off', () => {
  const c = loadConfig({})
  assert.equal([c.blocklistSources, c.blocklistRefreshSeconds, c.linkCreateBurst, c.linkCreatePerMinute, c.newAccountHours, c.reportsSuspendAfter], [[], 3600, 60, 30, 0, 0])
})

test('BLOCKLIST_SOURCES: URLs as given, files resolved against the working directory, each named as written', () => {
  const c = loadConfig({ BLOCKLIST_SOURCES: ' https://feed.example/hosts.txt , lists/phish.txt,/etc/x.txt ' })
  assert.equal(c.blocklistSources, [
    { name: 'https://feed.example/hosts.txt', location: 'https://feed.example/hosts.txt' },
    { name: 'lists/phish.txt', location: resolve('lists/phish.txt') },
    { name: '/etc/x.txt', location: '/etc/x.txt' },
  ])
})

test('BLOCKLIST_SOURCES refuses other schemes, a source twice and the name "manual"; BLOCKLIST_REFRESH_S is at least 5', () => {
  for (const [env, message] of [
    [{ BLOCKLIST_SOURCES: 'ftp://feed.example/x' }, /neither an http\(s\) URL nor a file/],
    [{ BLOCKLIST_SOURCES: 'a.txt,a.txt' }, /lists a source twice/],
    [{ BLOCKLIST_SOURCES: 'manual' }, /"manual" names the operator's own entries/],
    [{ BLOCKLIST_REFRESH_S: '4' }, /BLOCKLIST_REFRESH_S must be an integer from 5/],
    [{ LINK_CREATE_PER_MINUTE: '0' }, /LINK_CREATE_PER_MINUTE must be an integer from 1/],
    [{ LINK_CREATE_BURST: '0' }, /LINK_CREATE_BURST must be an integer from 1/],
    [{ NEW_ACCOUNT_HOURS: '-1' }, /NEW_ACCOUNT_HOURS must be an integer/],
    [{ REPORTS_SUSPEND_AFTER: 'x' }, /REPORTS_SUSPEND_AFTER must be an integer/],
  ] as Array<[Record<string, string>, RegExp]>) {
    assert.throws(() => loadConfig(env), (err: Error) => err instanceof ConfigError && message.test(err.message), JSON.stringify(env))
  }
})

test.run()
