/**
 * The failures the API answers with a 4xx or 503. Each names what is wrong in words a caller can act
 * on; lambda/http/error-response.ts turns them into responses, and anything else is a bug (500).
 */
export class BadRequestError extends Error {}

export class PayloadTooLargeError extends Error {}

export class UnsupportedMediaTypeError extends Error {}

/**
 * A request malformed in a way RFC 6750 §3.1 calls `invalid_request`: two Authorization values, a
 * Bearer token not separated from its scheme by spaces.
 */
export class InvalidRequestError extends Error {}

/** No usable bearer credentials: RFC 6750 says to answer with a bare challenge. */
export class MissingCredentialsError extends Error {}

export class InvalidTokenError extends Error {}

export class InsufficientScopeError extends Error {
  constructor(readonly requiredScope: string) {
    super(`the token lacks the scope '${requiredScope}'`);
  }
}

export class PlantConflictError extends Error {}

/** A dependency (the store, the issuer's key set) could not be reached in time; nothing was written. */
export class DependencyUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export class StoreUnavailableError extends DependencyUnavailableError {}

export class IssuerUnavailableError extends DependencyUnavailableError {}
