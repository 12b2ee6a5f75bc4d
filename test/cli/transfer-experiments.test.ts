// Experiments move with export and import: the secret (a visitor keeps its variant, a click id
// already out still verifies), the variants with their Location forms and hosts computed again,
// the results, and the ids that converted (a replay still counts once).
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { call, newUser } from '../helpers/api.js'
import { runCli } from '../helpers/cli.js'
import { exported, exportRows, freshStore } from '../helpers/install.js'
import { startServer } from '../helpers/server.js'

const A = 'https://example.com/a'
const B = 'https://example.com/b'
const UA = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36' }

test('an experiment, its secret, results and converted ids survive export and import', async () => {
  const source = await freshStore()
  const target = await freshStore()
  try {
    const srv = await startServer(source.env)
    let code: string
    let token: string
    const seen: Array<{ ip: string; location: string; cid: string }> = []
    try {
      const user = await newUser(srv.url)
      token = user.token
      const res = await call(srv.url, 'POST', '/api/v1/links', { token, body: { url: 'https://example.com/', variants: [{ url: A, weight: 50 }, { url: B, weight: 50 }], conversions: true } })
      code = res.body.code
      for (let i = 0; i < 6; i++) {
        const ip = `10.41.0.${i}`
        const location = (await call(srv.url, 'GET', `/r/${code}`, { ip, headers: UA })).headers.get('location')!
        seen.push({ ip, location: location.split('?')[0]!, cid: new URL(location).searchParams.get('ls_cid')! })
      }
      assert.is((await call(srv.url, 'POST', `/c/${seen[0]!.cid}`, { ip: seen[0]!.ip })).status, 204)
    } finally {
      await srv.close() // the last flush writes the counts
    }
    const stream = await exported(source, '--sessions')
    const imported = await runCli(['import', '--json'], target.env, stream)
    assert.is(imported.status, 0, imported.stderr)
    assert.equal(exportRows(await exported(target, '--sessions')), exportRows(stream))
    const moved = await startServer(target.env)
    try {
      const link = await call(moved.url, 'GET', `/api/v1/links/${code}`, { token })
      assert.equal([link.body.variants, link.body.conversions], [[{ url: A, weight: 50 }, { url: B, weight: 50 }], true])
      for (const s of seen) assert.is((await call(moved.url, 'GET', `/r/${code}`, { ip: s.ip, headers: UA })).headers.get('location')!.split('?')[0], s.location, `${s.ip} keeps its variant`)
      assert.is((await call(moved.url, 'POST', `/c/${seen[0]!.cid}`, { ip: seen[0]!.ip })).status, 204, 'a replay is answered')
      assert.is((await call(moved.url, 'POST', `/c/${seen[1]!.cid}`, { ip: seen[1]!.ip })).status, 204, 'an id from before verifies')
      const stats = await call(moved.url, 'GET', `/api/v1/links/${code}/stats`, { token })
      const conversions = stats.body.variants.reduce((n: number, v: any) => n + v.conversions, 0)
      assert.is(conversions, 2, 'the replayed id counted once, the other once')
      assert.is(stats.body.variants.reduce((n: number, v: any) => n + v.visits, 0), 6, 'the visits before the move (the new ones wait for a flush)')
    } finally {
      await moved.close()
    }
  } finally {
    await source.drop()
    await target.drop()
  }
})

test.run()
