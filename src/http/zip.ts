// A ZIP archive (PKWARE APPNOTE 6.3.10) written as it streams, never held whole: each entry's
// local header says its CRC-32 and sizes follow the data (general purpose bit 3), the data is
// deflated as it comes, a data descriptor after it carries them, and the central directory closes
// the archive. No ZIP64: an archive that would pass 4 GiB is refused mid-stream.
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { crc32, createDeflateRaw } from 'node:zlib'

export interface ZipEntry {
  /** a path inside the archive, "/"-separated */
  name: string
  data: AsyncIterable<Buffer | string>
}

const LOCAL_HEADER = 0x04034b50
const DATA_DESCRIPTOR = 0x08074b50
const CENTRAL_HEADER = 0x02014b50
const END_OF_CENTRAL = 0x06054b50
/** bit 3: sizes and CRC in a data descriptor; bit 11: names are UTF-8 */
const FLAGS = 0x0808
const DEFLATE = 8
const VERSION = 20 // 2.0: deflate, data descriptors
const MAX_32 = 0xffff_ffff

export class ZipTooLarge extends Error {}

/** The archive's bytes, entry by entry; each entry's data is read once, as the archive is. */
export async function* zip(entries: Iterable<ZipEntry> | AsyncIterable<ZipEntry>, now = new Date()): AsyncGenerator<Buffer> {
  const { time, date } = dosDateTime(now)
  const central: Buffer[] = []
  let offset = 0
  let count = 0
  for await (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8')
    const local = Buffer.alloc(30)
    local.writeUInt32LE(LOCAL_HEADER, 0)
    local.writeUInt16LE(VERSION, 4)
    local.writeUInt16LE(FLAGS, 6)
    local.writeUInt16LE(DEFLATE, 8)
    local.writeUInt16LE(time, 10)
    local.writeUInt16LE(date, 12)
    // CRC-32 and both sizes stay 0 here: they are in the data descriptor.
    local.writeUInt16LE(name.length, 26)
    yield local
    yield name
    const sums = { crc: 0, size: 0 }
    let compressed = 0
    for await (const chunk of deflate(tap(entry.data, sums))) {
      compressed += chunk.length
      yield chunk
    }
    if (sums.size > MAX_32 || compressed > MAX_32 || offset > MAX_32) throw new ZipTooLarge('the archive would need ZIP64')
    const descriptor = Buffer.alloc(16)
    descriptor.writeUInt32LE(DATA_DESCRIPTOR, 0)
    descriptor.writeUInt32LE(sums.crc, 4)
    descriptor.writeUInt32LE(compressed, 8)
    descriptor.writeUInt32LE(sums.size, 12)
    yield descriptor
    const header = Buffer.alloc(46)
    header.writeUInt32LE(CENTRAL_HEADER, 0)
    header.writeUInt16LE(VERSION, 4) // made by: MS-DOS attributes, 2.0
    header.writeUInt16LE(VERSION, 6)
    header.writeUInt16LE(FLAGS, 8)
    header.writeUInt16LE(DEFLATE, 10)
    header.writeUInt16LE(time, 12)
    header.writeUInt16LE(date, 14)
    header.writeUInt32LE(sums.crc, 16)
    header.writeUInt32LE(compressed, 20)
    header.writeUInt32LE(sums.size, 24)
    header.writeUInt16LE(name.length, 28)
    header.writeUInt32LE(offset, 42)
    central.push(header, name)
    offset += local.length + name.length + compressed + descriptor.length
    count++
  }
  const directory = Buffer.concat(central)
  if (offset + directory.length > MAX_32 || count > 0xffff) throw new ZipTooLarge('the archive would need ZIP64')
  const end = Buffer.alloc(22)
  end.writeUInt32LE(END_OF_CENTRAL, 0)
  end.writeUInt16LE(count, 8)
  end.writeUInt16LE(count, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  yield directory
  yield end
}

/** The chunks as Buffers, adding each to the running CRC-32 and size. */
async function* tap(data: AsyncIterable<Buffer | string>, sums: { crc: number; size: number }): AsyncGenerator<Buffer> {
  for await (const chunk of data) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
    sums.crc = crc32(buffer, sums.crc)
    sums.size += buffer.length
    yield buffer
  }
}

/** Raw deflate (no zlib wrapper, as ZIP wants it), read as it is written: the stream's own backpressure. */
async function* deflate(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const z = createDeflateRaw()
  let failed: unknown
  // Caught at once: when the reader stops early, the feed fails after this generator is gone.
  const feeding = pipeline(Readable.from(source), z).catch((err: unknown) => {
    failed = err
  })
  try {
    for await (const chunk of z) yield chunk as Buffer
  } finally {
    z.destroy()
  }
  await feeding
  if (failed !== undefined) throw failed
}

/** MS-DOS date and time (local fields, 2-second steps), here in UTC. */
function dosDateTime(d: Date): { time: number; date: number } {
  const year = Math.max(1980, d.getUTCFullYear())
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  }
}
