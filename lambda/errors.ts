import type { MetricName } from "./metrics.ts";

/**
 * The failures the API answers with a 4xx or 503. Each class declares, once, its status, its kind (the
 * stable code logged as `errorKind`) and the metric it counts under: read by lambda/http/error-response.ts,
 * which turns them into answers. Anything else is a bug (500).
 */
export abstract class ApiError extends Error {
  abstract readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 503;
  abstract readonly kind: string;
  abstract readonly metric: MetricName | undefined;
}

/** The base of a failure class: its `name` (so that a log line says what it was), status, kind, metric. */
function failure<Status extends ApiError["status"], Metric extends MetricName | undefined>(
  name: string,
  status: Status,
  kind: string,
  metric: Metric,
) {
  return class extends ApiError {
    override name = name;
    readonly status = status;
    readonly kind = kind;
    readonly metric = metric;
  };
}

export class BadRequestError extends failure("BadRequestError", 400, "bad_request", "RefusedBody") {}

export class PayloadTooLargeError extends failure(
  "PayloadTooLargeError",
  413,
  "payload_too_large",
  "RefusedSize",
) {}

export class UnsupportedMediaTypeError extends failure(
  "UnsupportedMediaTypeError",
  415,
  "unsupported_media_type",
  "RefusedMediaType",
) {}

/**
 * A request malformed in a way RFC 6750 §3.1 calls `invalid_request`: two Authorization values, a
 * Bearer token not separated from its scheme by spaces.
 */
export class InvalidRequestError extends failure(
  "InvalidRequestError",
  400,
  "invalid_request",
  "RefusedAuth",
) {}

/** No usable bearer credentials: RFC 6750 says to answer with a bare challenge. */
export class MissingCredentialsError extends failure(
  "MissingCredentialsError",
  401,
  "missing_token",
  "RefusedAuth",
) {}

export class InvalidTokenError extends failure(
  "InvalidTokenError",
  401,
  "invalid_token",
  "RefusedAuth" as MetricName,
) {}

/**
 * A token naming a kid the issuer's freshly fetched key set does not hold: an invalid token (401), counted
 * apart from other refusals so that a key rotation the function has not caught up with, or a caller
 * probing kids, shows as such rather than as the issuer failing.
 */
export class UnknownSigningKeyError extends InvalidTokenError {
  override name = "UnknownSigningKeyError";
  override metric = "UnknownSigningKey" as const;
}

export class InsufficientScopeError extends failure(
  "InsufficientScopeError",
  403,
  "insufficient_scope",
  "RefusedAuth",
) {
  constructor(readonly requiredScope: string) {
    super(`the token lacks the scope '${requiredScope}'`);
  }
}

export class PlantConflictError extends failure("PlantConflictError", 409, "conflict", "Conflict") {}

/** No operation of the routes table (lambda/http/routes.ts) has this method and path. */
export class RouteNotFoundError extends failure("RouteNotFoundError", 404, "no_route", undefined) {}

/** A dependency (the store, the issuer's key set) could not be reached in time; Retry-After says when to retry. */
export class DependencyUnavailableError extends failure(
  "DependencyUnavailableError",
  503,
  "unavailable",
  undefined as MetricName | undefined,
) {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * What is known of a create the store did not confirm: `not-written` when no write can have applied
 * (refused, throttled, never sent), `unknown` when one may have (sent, then no answer, or a 5xx).
 */
export type WriteOutcome = "not-written" | "unknown";

export class StoreUnavailableError extends DependencyUnavailableError {
  override name = "StoreUnavailableError";
  override kind = "store_unavailable";
  override metric = "StoreUnavailable" as const;
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
 * issuer's fault, so counted under UnknownSigningKey, not IssuerUnavailable.
 */
export class UnknownSigningKeyHeldError extends DependencyUnavailableError {
  override name = "UnknownSigningKeyHeldError";
  override kind = "unknown_signing_key";
  override metric = "UnknownSigningKey" as const;
}

/** The issuer's own fault: its key set could not be fetched, or is not a key set this API can take. */
export class IssuerUnavailableError extends DependencyUnavailableError {
  override name = "IssuerUnavailableError";
  override kind = "issuer_unavailable";
  override metric = "IssuerUnavailable" as const;
}
