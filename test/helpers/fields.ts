// Field validators refuse bad input by throwing a 422 INVALID_FORM_BODY HttpError that lists
// its field errors (contract §2). Unit tests of the validators check that shape here, once.
import * as assert from 'uvu/assert'
import { HttpError, type FieldError } from '../../src/http/errors.js'

/**
 * Runs a validator that must refuse its input and returns the field errors of its 422: fails the
 * test unless it throws an HttpError 422 INVALID_FORM_BODY listing at least one field error, each
 * exactly {field, code, message} with a non-empty message.
 */
export function fieldErrors(fn: () => unknown): FieldError[] {
  try {
    fn()
  } catch (err) {
    assert.instance(err, HttpError)
    const e = err as HttpError
    assert.is(e.status, 422)
    assert.is(e.code, 'INVALID_FORM_BODY')
    assert.ok(Array.isArray(e.errors) && e.errors.length > 0, 'field errors are listed')
    for (const fe of e.errors!) {
      assert.equal(Object.keys(fe).sort(), ['code', 'field', 'message'])
      assert.ok(fe.message.length > 0)
    }
    return e.errors!
  }
  assert.unreachable('expected a 422 HttpError')
  return []
}
