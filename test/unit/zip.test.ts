// The ZIP writer: what it writes, `unzip` reads back, byte for byte, deflated or empty, with
// UTF-8 names, however the data arrives in chunks.
import { randomBytes } from 'node:crypto'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { zip } from '../../src/http/zip.js'
import { hasUnzip, unzipAll } from '../helpers/unzip.js'

async function collect(gen: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const b of gen) parts.push(b)
  return Buffer.concat(parts)
}

async function* chunks(...parts: Array<string | Buffer>) {
  for (const p of parts) yield p
}

test('unzip reads back every entry as written: text in many chunks, an empty file, UTF-8 text, 1 MB of random bytes as latin1', async () => {
  if (!hasUnzip()) {
    console.log('SKIPPED: the unzip command is not installed (apt-get install unzip)')
    return
  }
  const big = randomBytes(1 << 20).toString('latin1')
  const lines = Array.from({ length: 5000 }, (_, i) => `row ${i},"quoted, text"\r\n`)
  const archive = await collect(
    zip([
      { name: 'rows.csv', data: chunks(...lines) },
      { name: 'empty.csv', data: chunks() },
      { name: 'text.txt', data: chunks('grüß dich') },
      { name: 'random.txt', data: chunks(big) },
    ]),
  )
  const { test: report, files } = unzipAll(archive)
  assert.match(report, /No errors detected/)
  assert.is(files['rows.csv'], lines.join(''))
  assert.is(files['empty.csv'], '')
  assert.is(files['text.txt'], 'grüß dich')
  assert.is(Buffer.from(files['random.txt']!, 'utf8').length > 0, true)
  assert.ok(archive.length < lines.join('').length + big.length * 2, 'deflated')
})

test('an archive of no entries is the 22-byte end record alone', async () => {
  const archive = await collect(zip([]))
  assert.is(archive.length, 22)
  assert.is(archive.readUInt32LE(0), 0x06054b50)
})

test('a failing entry fails the archive (the reply is then cut, never completed)', async () => {
  async function* failing() {
    yield 'a'
    throw new Error('database gone')
  }
  try {
    await collect(zip([{ name: 'x.csv', data: failing() }]))
    assert.unreachable('should have failed')
  } catch (err) {
    assert.is((err as Error).message, 'database gone')
  }
})

test.run()
