// A conflict's victim (40P01 deadlock, 40001 serialization failure) is run again, a bounded
// number of times (src/db/retry.ts); nothing else is.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { CONFLICT_ATTEMPTS, isConflictVictim, retryConflicts } from '../../src/db/retry.js'

const failure = (code: string) => Object.assign(new Error(`failed with ${code}`), { code })

test('a deadlock and a serialization failure are victims; other errors are not', () => {
  assert.ok(isConflictVictim(failure('40P01')))
  assert.ok(isConflictVictim(failure('40001')))
  for (const code of ['40002', '55P03', '23505', '57P01', 'CONNECTION_CLOSED']) assert.not.ok(isConflictVictim(failure(code)), code)
  assert.not.ok(isConflictVictim(undefined))
})

test('a victim is run again until it goes through, each retry told', async () => {
  const attempts: number[] = []
  const told: unknown[] = []
  const result = await retryConflicts(
    async (attempt) => {
      attempts.push(attempt)
      if (attempt === 0) throw failure('40P01')
      if (attempt === 1) throw failure('40001')
      return 'done'
    },
    { onRetry: (err) => told.push((err as { code: string }).code) },
  )
  assert.is(result, 'done')
  assert.equal(attempts, [0, 1, 2])
  assert.equal(told, ['40P01', '40001'])
})

test('the attempts are bounded: the last failure is thrown as it is', async () => {
  let runs = 0
  const last = failure('40P01')
  const err = await retryConflicts(async () => {
    runs++
    throw runs === CONFLICT_ATTEMPTS ? last : failure('40P01')
  }).catch((e: unknown) => e)
  assert.is(runs, CONFLICT_ATTEMPTS)
  assert.is(err, last)
})

test('any other failure is thrown at once, and so is a victim that may not run again', async () => {
  for (const [err, canRetry] of [[failure('23505'), true], [failure('40P01'), false]] as const) {
    let runs = 0
    const thrown = await retryConflicts(
      async () => {
        runs++
        throw err
      },
      { canRetry: () => canRetry },
    ).catch((e: unknown) => e)
    assert.is(thrown, err)
    assert.is(runs, 1)
  }
})

test.run()
