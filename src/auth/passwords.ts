// Password hashing with scrypt (memory-hard, per-user salt). node:crypto runs it on the libuv
// thread pool, so hashing never blocks the event loop; @noble/hashes' scrypt would run on it.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { KdfQueue } from './kdf-queue.js'

const KEY_BYTES = 32
const SALT_BYTES = 16
const R = 8
const P = 1

// At most one hash per core but one, and never more than 2 of the thread pool's 4 threads, so
// a login storm cannot take every core from the event loop, nor the whole pool from file I/O and
// DNS. Up to 64 more wait, for at most 10 s: at about 150 ms a hash that is a full line.
const queue = new KdfQueue(Math.max(1, Math.min(availableParallelism() - 1, 2)), 64, 10_000)

/** Says whether the hash is still wanted when its turn comes (the client may have gone). */
export type Wanted = () => boolean

function derive(password: string, salt: Buffer, log2N: number, r: number, p: number, wanted?: Wanted): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** log2N, r, p, maxmem: 256 * 2 ** log2N * r * p }
  const task = () =>
    new Promise<Buffer>((resolve, reject) => {
      scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key)))
    })
  return queue.run(task, wanted)
}

/** "scrypt$<log2 N>$<r>$<p>$<salt b64url>$<key b64url>": the cost travels with the hash. */
export async function hashPassword(password: string, log2N: number, wanted?: Wanted): Promise<string> {
  const salt = randomBytes(SALT_BYTES)
  const key = await derive(password, salt, log2N, R, P, wanted)
  return ['scrypt', log2N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$')
}

export async function verifyPassword(password: string, stored: string, wanted?: Wanted): Promise<boolean> {
  const [scheme, log2N, r, p, salt, key] = stored.split('$')
  if (scheme !== 'scrypt' || salt === undefined || key === undefined) return false
  const cost = [Number(log2N), Number(r), Number(p)] as const
  // A damaged row verifies nothing; it must not turn a login into a 500.
  if (!inRange(cost[0], 1, 22) || !inRange(cost[1], 1, 32) || !inRange(cost[2], 1, 16)) return false
  const expected = Buffer.from(key, 'base64url')
  const actual = await derive(password, Buffer.from(salt, 'base64url'), ...cost, wanted)
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

const inRange = (n: number, min: number, max: number) => Number.isInteger(n) && n >= min && n <= max
