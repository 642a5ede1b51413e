import type { MetricName } from "./metrics.ts";

/** RFC 6750's challenge, in the realm of every one this API sends, with `params` after it. */
const bearer = (params = "") => ({ "www-authenticate": `Bearer realm="plants"${params}` });

/**
 * The failures the API answers with a 4xx or 503. Each class declares its `name` (a log line says what it
 * was, minified or not), status, headers, kind (the stable code logged as `errorKind`) and metric:
 * lambda/http/error-response.ts answers any error from these alone. Anything else is a bug (500).
 */
export abstract class ApiError extends Error {
  abstract readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 503;
  abstract readonly kind: string;
  abstract readonly metric: MetricName | undefined;
  /** The answer's headers beside its content-type. */
  get headers(): Record<string, string> {
    return {};
  }
  /** The calls the request made to the store before it failed so: its StoreAttempts metric. */
  storeCalls = 0;
}

export class BadRequestError extends ApiError {
  override name = "BadRequestError";
  readonly status = 400;
  readonly kind = "bad_request";
  readonly metric = "RefusedBody";
}

export class PayloadTooLargeError extends ApiError {
  override name = "PayloadTooLargeError";
  readonly status = 413;
  readonly kind = "payload_too_large";
  readonly metric = "RefusedSize";
}

export class UnsupportedMediaTypeError extends ApiError {
  override name = "UnsupportedMediaTypeError";
  readonly status = 415;
  readonly kind = "unsupported_media_type";
  readonly metric = "RefusedMediaType";
}

/**
 * A request malformed in a way RFC 6750 §3.1 calls `invalid_request`: two Authorization values, a
 * Bearer token not separated from its scheme by spaces.
 */
export class InvalidRequestError extends ApiError {
  override name = "InvalidRequestError";
  readonly status = 400;
  readonly kind = "invalid_request";
  readonly metric = "RefusedAuth";
  override get headers() {
    return bearer(`, error="${this.kind}"`);
  }
}

/** No usable bearer credentials: RFC 6750 §3.1 says to answer with a bare challenge. */
export class MissingCredentialsError extends ApiError {
  override name = "MissingCredentialsError";
  readonly status = 401;
  readonly kind = "missing_token";
  readonly metric = "RefusedAuth";
  override get headers() {
    return bearer();
  }
}

export class InvalidTokenError extends ApiError {
  override name = "InvalidTokenError";
  readonly status = 401;
  readonly kind = "invalid_token";
  readonly metric: MetricName = "RefusedAuth";
  override get headers() {
    return bearer(`, error="invalid_token", error_description="${this.message}"`);
  }
}

/**
 * A token naming a kid the issuer's freshly fetched key set does not hold: an invalid token (401), counted
 * apart from other refusals so that a key rotation the function has not caught up with, or a caller
 * probing kids, shows as such rather than as the issuer failing.
 */
export class UnknownSigningKeyError extends InvalidTokenError {
  override name = "UnknownSigningKeyError";
  override readonly metric = "UnknownSigningKey";
}

export class InsufficientScopeError extends ApiError {
  override name = "InsufficientScopeError";
  readonly status = 403;
  readonly kind = "insufficient_scope";
  readonly metric = "RefusedAuth";
  constructor(readonly requiredScope: string) {
    super(`the token lacks the scope '${requiredScope}'`);
  }
  override get headers() {
    return bearer(`, error="${this.kind}", scope="${this.requiredScope}"`);
  }
}

export class PlantConflictError extends ApiError {
  override name = "PlantConflictError";
  readonly status = 409;
  readonly kind = "conflict";
  readonly metric = "Conflict";
}

/** No operation of the routes table (lambda/http/routes.ts) has this method and path. */
export class RouteNotFoundError extends ApiError {
  override name = "RouteNotFoundError";
  readonly status = 404;
  readonly kind = "no_route";
  readonly metric = undefined;
}

/** A dependency (the store, the issuer's key set) could not be reached in time; Retry-After says when to retry. */
export class DependencyUnavailableError extends ApiError {
  override name = "DependencyUnavailableError";
  readonly status = 503;
  readonly kind: string = "unavailable";
  readonly metric: MetricName | undefined = undefined;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
  override get headers() {
    return { "retry-after": String(this.retryAfterSeconds) };
  }
}

/**
 * What is known of a create the store did not confirm: `not-written` when no write can have applied
 * (refused, throttled, never sent), `unknown` when one may have (sent, then no answer, or a 5xx).
 */
export type WriteOutcome = "not-written" | "unknown";

export class StoreUnavailableError extends DependencyUnavailableError {
  override name = "StoreUnavailableError";
  override readonly kind = "store_unavailable";
  override readonly metric = "StoreUnavailable";
  constructor(
    readonly outcome: WriteOutcome,
    retryAfterSeconds: number,
    options?: ErrorOptions,
  ) {
    super(
      outcome === "unknown"
        ? "the plant store did not confirm the write: the plant may have been stored; sending the same request again is safe (200 if it was)"
        : "the plant store is unavailable; nothing was written, retry later",
      retryAfterSeconds,
      options,
    );
  }
}

/**
 * A token naming a kid not in the key set while a refetch is held back after a fresh key set lacked
 * another: 503, since only the next fetch can tell a key just rotated in from a bogus kid; not the
 * issuer's fault, so not IssuerUnavailable; and a 503, so counted apart from the 401 of UnknownSigningKey
 * (the gateway's 5xx alarm subtracts these, and must not subtract a 401).
 */
export class UnknownSigningKeyHeldError extends DependencyUnavailableError {
  override name = "UnknownSigningKeyHeldError";
  override readonly kind = "unknown_signing_key";
  override readonly metric = "UnknownSigningKeyHeld";
}

/** The issuer's own fault: its key set could not be fetched, or is not a key set this API can take. */
export class IssuerUnavailableError extends DependencyUnavailableError {
  override name = "IssuerUnavailableError";
  override readonly kind = "issuer_unavailable";
  override readonly metric = "IssuerUnavailable";
}
