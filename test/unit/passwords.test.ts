// Password hashing and checking (src/passwords/passwords.ts). Contract §3: a memory-hard KDF with a
// per-user salt, never on the event loop; an unknown username spends the same hashing work.
// Issue 9: argon2id from @noble/hashes, PHC strings; old scrypt hashes and weaker argon2id ones
// verify and ask to be rehashed; a wrong password costs the same whatever the stored parameters.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Passwords } from '../../src/passwords/passwords.js'
import { legacyScryptHash } from '../helpers/passwords.js'

const CHEAP = { memoryKiB: 64, iterations: 1 } // these tests check behaviour, not strength

const test = suite<{ passwords: Passwords }>('Passwords')
test.before((ctx) => {
  ctx.passwords = new Passwords(CHEAP, 2)
})
test.after(({ passwords }) => passwords.close())

// contract §3: a memory-hard KDF with a per-user salt; argon2id as a PHC string
test('a hash is an argon2id PHC string at the configured cost, and verifies its own password only', async ({ passwords }) => {
  const stored = await passwords.hash('correct horse')
  assert.match(stored, /^\$argon2id\$v=19\$m=64,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
  assert.equal(await passwords.verify('correct horse', stored), { ok: true, rehash: false })
  for (const wrong of ['correct horsE', 'correct horse ', '', 'correct']) {
    assert.equal(await passwords.verify(wrong, stored), { ok: false, rehash: false }, wrong)
  }
})

test('two hashes of one password differ (a salt each) and both verify', async ({ passwords }) => {
  const [a, b] = [await passwords.hash('same password'), await passwords.hash('same password')]
  assert.is.not(a, b)
  assert.ok((await passwords.verify('same password', a)).ok)
  assert.ok((await passwords.verify('same password', b)).ok)
})

// decisions.md: passwords are normalised to NFC; U+0000 is a character like any other
test('NFC and NFD spellings match; non-ASCII and U+0000 round-trip and count', async ({ passwords }) => {
  const nfc = await passwords.hash('pass\u00e9word')
  assert.ok((await passwords.verify('passe\u0301word', nfc)).ok)
  for (const password of ['😀'.repeat(8), 'pässwörd', 'abc\u0000defgh', 'p'.repeat(128)]) {
    assert.ok((await passwords.verify(password, await passwords.hash(password))).ok, JSON.stringify(password))
  }
  assert.not.ok((await passwords.verify('abcdefgh', await passwords.hash('abc\u0000defgh'))).ok)
})

// contract §3: an unknown username spends the same work; a damaged row verifies nothing
test('an unknown user (undefined) and a damaged hash verify nothing, without throwing', async ({ passwords }) => {
  assert.equal(await passwords.verify('anything', undefined), { ok: false, rehash: false })
  for (const damaged of ['', 'not a hash', 'scrypt$1$1$1$x$y', '$argon2id$v=19$m=64,t=1,p=1$c2FsdA$a2V5']) {
    assert.equal(await passwords.verify('anything', damaged), { ok: false, rehash: false }, damaged)
  }
})

// Existing scrypt hashes keep working, and a successful login replaces them
test('a scrypt hash of the previous release verifies, and asks to be rehashed', async ({ passwords }) => {
  const old = legacyScryptHash('pass\u00e9word')
  assert.equal(await passwords.verify('passe\u0301word', old), { ok: true, rehash: true })
  assert.equal(await passwords.verify('wrong password', old), { ok: false, rehash: false })
})

// So does argon2id with parameters weaker than the configured ones
test('argon2id at another cost verifies, and asks to be rehashed', async ({ passwords }) => {
  const weaker = new Passwords({ memoryKiB: 8, iterations: 1 }, 1)
  const stored = await weaker.hash('correct horse')
  await weaker.close()
  assert.equal(await passwords.verify('correct horse', stored), { ok: true, rehash: true })
  assert.equal(await passwords.verify('wrong', stored), { ok: false, rehash: false })
})

// A wrong password against an old-format hash takes the same time as against a current one
test('a wrong password against a cheaper hash is answered no sooner than one against a current hash', async () => {
  const passwords = new Passwords({ memoryKiB: 8_192, iterations: 2 }, 1)
  const current = await passwords.hash('correct horse')
  const cheap = new Passwords({ memoryKiB: 8, iterations: 1 }, 1)
  const cheapHash = await cheap.hash('correct horse')
  await cheap.close()
  await passwords.verify('wrong', current)
  const t = performance.now()
  await passwords.verify('wrong', current)
  const currentMs = performance.now() - t
  for (const stored of [cheapHash, legacyScryptHash('correct horse')]) {
    const started = performance.now()
    assert.not.ok((await passwords.verify('wrong', stored)).ok)
    const ms = performance.now() - started
    assert.ok(ms >= currentMs * 0.6, `${stored.slice(0, 12)}: ${ms.toFixed(1)} ms vs ${currentMs.toFixed(1)} ms for a current hash`)
  }
  await passwords.close()
})

// Issue 22: no hash runs at start, so the first check may come before any measured what one costs
test('the first check of a fresh service, a wrong password against a cheaper hash, still takes a current hash\'s time', async () => {
  const cheap = new Passwords({ memoryKiB: 8, iterations: 1 }, 1)
  const cheapHash = await cheap.hash('correct horse')
  await cheap.close()
  const passwords = new Passwords({ memoryKiB: 8_192, iterations: 2 }, 1)
  const started = performance.now()
  assert.not.ok((await passwords.verify('wrong', cheapHash)).ok)
  const firstMs = performance.now() - started
  const t = performance.now()
  await passwords.verify('wrong', await passwords.hash('correct horse'))
  const currentMs = (performance.now() - t) / 2 // a hash, then a check: two derivations
  await passwords.close()
  assert.ok(firstMs >= currentMs * 0.6, `${firstMs.toFixed(1)} ms vs ${currentMs.toFixed(1)} ms for a current hash`)
})

test('an unknown user fails against the dummy without any hash made at start', async () => {
  const passwords = new Passwords(CHEAP, 1)
  assert.is(passwords.pool.alive, 0)
  assert.equal(await passwords.verify('anything', undefined), { ok: false, rehash: false })
  await passwords.close()
})

// No KDF runs on the main thread: the event-loop delay stays small while 20
// hashes at the default cost run. One on the event loop would stall it for a whole hash.
test('the event loop keeps turning while 20 hashes at the default cost run', async () => {
  const passwords = new Passwords({ memoryKiB: 19_456, iterations: 2 }, 2)
  const t = performance.now()
  await passwords.hash('correct horse battery')
  const oneHashMs = performance.now() - t
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  await Promise.all(Array.from({ length: 20 }, (_, i) => passwords.hash(`password ${i}`)))
  delay.disable()
  await passwords.close()
  const maxMs = delay.max / 1e6
  assert.ok(maxMs < oneHashMs / 2, `event loop stalled ${maxMs.toFixed(1)} ms; one hash takes ${oneHashMs.toFixed(1)} ms`)
})

test.run()
