// One error type for every client-visible failure, and the catalogue of codes (contract §2).

export type FieldErrorCode = 'REQUIRED' | 'TYPE' | 'TOO_SHORT' | 'TOO_LONG' | 'INVALID'

export interface FieldError {
  field: string
  code: FieldErrorCode
  message: string
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly errors?: FieldError[],
  ) {
    super(message)
    this.name = 'HttpError'
  }
}

export const routeNotFound = () => new HttpError(404, 'ROUTE_NOT_FOUND', 'no such route')
export const methodNotAllowed = (allow: string) =>
  new HttpError(405, 'METHOD_NOT_ALLOWED', 'method not allowed on this route', { allow })
export const unauthorized = () =>
  new HttpError(401, 'UNAUTHORIZED', 'a valid bearer token is required', { 'www-authenticate': 'Bearer' })
export const invalidCredentials = () =>
  new HttpError(401, 'INVALID_CREDENTIALS', 'username or password is incorrect')
export const currentPasswordIncorrect = () =>
  new HttpError(403, 'CURRENT_PASSWORD_INCORRECT', 'current_password is incorrect')
export const linkNotFound = () => new HttpError(404, 'LINK_NOT_FOUND', 'no such link')
export const linkExpired = () => new HttpError(410, 'LINK_EXPIRED', 'this link has expired')
export const linkDisabled = () => new HttpError(410, 'LINK_DISABLED', 'this link has been disabled')
/** A link with a password, asked without one (GET, or a POST without it), or with a wrong one. */
export const linkPasswordRequired = (wrong = false) =>
  new HttpError(401, 'LINK_PASSWORD_REQUIRED', wrong ? 'the password is not right' : 'this link has a password: POST it to /r/{code}/unlock as {"password"}')
/** Its owner's cap (max_visits) was reached. */
export const linkExhausted = () => new HttpError(410, 'LINK_EXHAUSTED', 'this link has reached its maximum number of visits')
/** The owner's change of a link an operator disabled. */
export const linkLocked = () => new HttpError(403, 'LINK_DISABLED', 'this link has been disabled by an operator; it can only be deleted')
export const accountDisabled = () => new HttpError(403, 'ACCOUNT_DISABLED', 'this account has been disabled')
/** `fields`: which urls have a blocked host ("url", "rules[2].url"); the link's url when not said. */
export const urlBlocked = (fields: readonly string[] = ['url']) =>
  new HttpError(422, 'URL_BLOCKED', `${fields.join(', ')}: its host is blocked`, {}, fields.map((field) => ({ field, code: 'INVALID' as const, message: 'its host is blocked' })))
export const clickIdNotFound = () => new HttpError(404, 'CLICK_ID_NOT_FOUND', 'no such click id, or it has expired')
export const sessionNotFound = () => new HttpError(404, 'SESSION_NOT_FOUND', 'no such session')
export const usernameTaken = () => new HttpError(409, 'USERNAME_TAKEN', 'username is already taken')
export const codeTaken = () => new HttpError(409, 'CODE_TAKEN', 'code is already in use or was used before')
export const linkLimitExceeded = (max: number) =>
  new HttpError(409, 'LINK_LIMIT_EXCEEDED', `an account may own at most ${max} links`)
export const linkChecksOff = () => new HttpError(409, 'LINK_CHECKS_OFF', 'destination checks are turned off on this service (LINK_CHECKS=off)')
export const webhookNotFound = () => new HttpError(404, 'WEBHOOK_NOT_FOUND', 'no such webhook')
export const deliveryNotFound = () => new HttpError(404, 'DELIVERY_NOT_FOUND', 'no such delivery of this webhook')
export const webhookLimitExceeded = (max: number) =>
  new HttpError(409, 'WEBHOOK_LIMIT_EXCEEDED', `an account may have at most ${max} webhooks`)
/** A bulk item not created because another item of its atomic batch failed. */
export const batchAborted = () =>
  new HttpError(424, 'BATCH_ABORTED', 'not created: another item of this atomic batch failed')
// 413 closes the connection: otherwise Node would drain the rest of the unread body to reuse the socket.
export const bodyTooLarge = (max: number) =>
  new HttpError(413, 'REQUEST_BODY_TOO_LARGE', `request body is larger than ${max} bytes`, { connection: 'close' })
export const unsupportedMediaType = () =>
  new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json (charset utf-8)')
export const unsupportedEncoding = () =>
  new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Encoding is not supported; send the JSON uncompressed')
export const invalidBody = (message: string) => new HttpError(422, 'INVALID_FORM_BODY', message)
export const invalidFields = (errors: FieldError[]) =>
  new HttpError(
    422,
    'INVALID_FORM_BODY',
    errors.map((e) => `${e.field}: ${e.message}`).join('; '),
    {},
    errors,
  )
/** Like invalidFields, for query parameters: a client can tell which part of its request to fix. */
export const invalidQuery = (errors: FieldError[]) =>
  new HttpError(422, 'INVALID_QUERY', errors.map((e) => `${e.field}: ${e.message}`).join('; '), {}, errors)
export const rateLimited = (retryAfterSeconds: number) =>
  new HttpError(429, 'RATE_LIMIT_EXCEEDED', 'too many requests; retry later', {
    'retry-after': String(retryAfterSeconds),
  })
export const badRequest = (message: string) => new HttpError(400, 'BAD_REQUEST', message)
export const expectationFailed = () =>
  new HttpError(417, 'EXPECTATION_FAILED', 'only "Expect: 100-continue" is supported')
export const internalError = () => new HttpError(500, 'INTERNAL_ERROR', 'internal error')
export const kdfBusy = (retryAfterSeconds: number) =>
  new HttpError(503, 'SERVICE_UNAVAILABLE', 'too many password checks are waiting; retry later', {
    'retry-after': String(retryAfterSeconds),
  })
export const serviceUnavailable = (message = 'the database is unavailable; retry later') =>
  new HttpError(503, 'SERVICE_UNAVAILABLE', message, { 'retry-after': '1' })
