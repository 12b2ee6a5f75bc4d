// Password hashing and verification: the one way into the KDF. New hashes are argon2id (RFC 9106)
// from @noble/hashes, computed on the worker threads of a KdfPool, never on the event loop.
// verify() costs the same whoever asks: an unknown user and a damaged row are checked against a
// dummy hash of the configured cost, and a failed check against an older, cheaper hash is padded
// to the time of one at the configured cost. Passwords are normalised to NFC first. A failed
// check puts its address behind all others for a while (KdfPool.demote).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { KdfJob } from './derive.js'
import { costKey, KdfPool, type Claim } from './kdf-pool.js'
import { encodeArgon2id, isCurrent, KEY_BYTES, parseStored, SALT_BYTES, type Argon2Params, type StoredHash } from './phc.js'

/** Whom a password check is for. The pool serves client addresses and accounts in fair turns. */
export interface Requester {
  /** the client's rate-limit key (an IPv4 address or an IPv6 /64) */
  address: string
  /** the account concerned: a user id, or the username a login or registration names */
  account: string
  /** see Claim.whenGone */
  whenGone?: Claim['whenGone']
}

export interface Verdict {
  ok: boolean
  /** the password was right but the stored hash is not argon2id at the configured cost */
  rehash: boolean
}

export class Passwords {
  readonly #pool: KdfPool
  readonly #currentCost: string
  /**
   * What an unknown user is checked against: the configured cost, a random salt and key. No
   * password derives that key, and none needs to: the check does a real hash's work, then fails.
   */
  readonly #dummy: StoredHash

  /** `idleMs`: the KDF threads stop after this long without a hash (KdfPool). */
  constructor(
    readonly params: Readonly<Argon2Params>,
    threads: number,
    idleMs?: number,
  ) {
    this.#pool = new KdfPool(threads, undefined, undefined, idleMs)
    this.#currentCost = costKey(argon2Job('', Buffer.alloc(0), params, KEY_BYTES))
    this.#dummy = { kind: 'argon2id', ...params, salt: randomBytes(SALT_BYTES), key: randomBytes(KEY_BYTES) }
  }

  get pool(): KdfPool {
    return this.#pool
  }

  async hash(password: string, who?: Requester): Promise<string> {
    const salt = randomBytes(SALT_BYTES)
    const { key } = await this.#pool.run(argon2Job(password, salt, this.params, KEY_BYTES), claimOf(who))
    return encodeArgon2id(this.params, salt, key)
  }

  /** Checks a password against a stored hash; undefined stands for a user that does not exist. */
  async verify(password: string, stored: string | undefined, who?: Requester): Promise<Verdict> {
    const parsed = stored === undefined ? undefined : parseStored(stored)
    const target = parsed ?? this.#dummy
    const { key, ms } = await this.#pool.run(jobFor(target, password), claimOf(who))
    const ok = parsed !== undefined && timingSafeEqual(key, target.key)
    if (who !== undefined) {
      if (ok) this.#pool.trust(who.address)
      else this.#pool.demote(who.address)
    }
    const current = isCurrent(target, this.params)
    // A wrong password against a cheaper hash answers no sooner than one against a current hash:
    // padded to the usual time of one, or, before any has run here, by running one.
    if (!ok && !current) {
      const typical = this.#pool.typicalMs(this.#currentCost)
      if (typical === undefined) await this.#pool.run(jobFor(this.#dummy, password), claimOf(who))
      else await sleep(Math.max(0, typical - ms))
    }
    return { ok, rehash: ok && !current }
  }

  close(): Promise<void> {
    return this.#pool.close()
  }
}

/** The pool's fairness keys. An account key is digested: a login may name any string, of any length. */
function claimOf(who: Requester | undefined): Claim {
  if (who === undefined) return { keys: {} }
  const account = createHash('sha256').update(who.account).digest('base64url')
  return { keys: { client: who.address, account }, whenGone: who.whenGone }
}

function argon2Job(password: string, salt: Uint8Array, params: Readonly<Argon2Params>, dkLen: number): KdfJob {
  return { alg: 'argon2id', password: password.normalize('NFC'), salt, memoryKiB: params.memoryKiB, iterations: params.iterations, dkLen }
}

function jobFor(hash: StoredHash, password: string): KdfJob {
  if (hash.kind === 'argon2id') return argon2Job(password, hash.salt, hash, hash.key.length)
  return { alg: 'scrypt', password: password.normalize('NFC'), salt: hash.salt, log2N: hash.log2N, dkLen: hash.key.length }
}
