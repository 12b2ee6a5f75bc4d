// The key derivations themselves: synchronous, CPU-bound, meant for a worker thread (kdf-worker.ts).
import { scryptSync } from 'node:crypto'
import { argon2id } from '@noble/hashes/argon2.js'

export type KdfJob =
  | { alg: 'argon2id'; password: string; salt: Uint8Array; memoryKiB: number; iterations: number; dkLen: number }
  | { alg: 'scrypt'; password: string; salt: Uint8Array; log2N: number; dkLen: number }

export function derive(job: KdfJob): Uint8Array {
  if (job.alg === 'argon2id') {
    return argon2id(job.password, job.salt, { m: job.memoryKiB, t: job.iterations, p: 1, dkLen: job.dkLen })
  }
  // The format of earlier releases: r = 8, p = 1; 128·N·r bytes of memory, plus headroom.
  const N = 2 ** job.log2N
  return scryptSync(job.password, job.salt, job.dkLen, { N, r: 8, p: 1, maxmem: 256 * N * 8 })
}
