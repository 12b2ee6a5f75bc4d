// The log sink (issue 34): log lines are written by a thread of their own, so a stdout that does
// not take them (a full pipe, journald behind) never stops the thread that answers requests; and
// nothing handed to it is lost, at a stop (close) or at an exit.
import { execFileSync } from 'node:child_process'
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { threadSink } from '../../src/log-sink.js'

const dir = mkdtempSync(join(tmpdir(), 'log-sink-'))
const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `{"n":${i},"tag":"${tag}"}\n`)

test('batches reach the file whole and in order; close resolves once all are written', async () => {
  const file = join(dir, 'ordered.log')
  const fd = openSync(file, 'w')
  const sink = threadSink(fd)
  const batches = lines(2_000, 'ordered')
  for (const b of batches) sink.write(b)
  await sink.close()
  closeSync(fd)
  assert.is(readFileSync(file, 'utf8'), batches.join(''))
})

test('a stdout nobody reads does not hold the writer: 4 MiB handed over at once into a full pipe, all of it there once read', async () => {
  const fifo = join(dir, 'stalled.fifo')
  execFileSync('mkfifo', [fifo])
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
  const writer = openSync(fifo, constants.O_WRONLY) // a blocking descriptor, as stdout usually is
  const sink = threadSink(writer)
  const batch = 'x'.repeat(64 * 1024 - 1) + '\n'
  const started = performance.now()
  for (let i = 0; i < 64; i++) sink.write(batch) // the pipe holds 64 KiB: the thread blocks at once
  const took = performance.now() - started
  assert.ok(took < 500, `handing 4 MiB to a stalled sink took ${took.toFixed(0)} ms`)
  let got = 0
  const closed = sink.close()
  const buf = Buffer.alloc(1 << 16)
  while (got < 64 * batch.length) {
    try {
      got += readSync(reader, buf)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err
      await new Promise((r) => setTimeout(r, 2))
    }
  }
  await closed
  assert.is(got, 64 * batch.length)
  closeSync(reader)
  closeSync(writer)
})

test('at process.exit, batches the thread had not written yet are written by the exiting thread', () => {
  const sinkUrl = new URL('../../src/log-sink.js', import.meta.url).href
  const script = `import { threadSink } from ${JSON.stringify(sinkUrl)}
    const sink = threadSink(1)
    for (let i = 0; i < 5000; i++) sink.write('{"n":' + i + '}\\n')
    process.exit(0)`
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: fileURLToPath(new URL('.', import.meta.url)) })
  const seen = new Set(out.trimEnd().split('\n').map((l) => (JSON.parse(l) as { n: number }).n))
  assert.is(seen.size, 5000, 'every line, once or (the batch the thread was on) twice')
})

test.run()
