import type { MetricName } from "./metrics.ts";

interface ApiErrorSpec {
  status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 503;
  /** The stable code a log line carries as `errorKind`; for a challenge, its RFC 6750 error code. */
  kind: string;
  metric?: MetricName;
  /** Whether the answer carries RFC 6750's Bearer challenge (`WWW-Authenticate`). */
  challenge?: true;
}

/**
 * The failures the API answers with a 4xx or 503, one declarative list: each code's status, kind, metric
 * and whether it challenges. An ApiError is one of these; lambda/http/error-response.ts answers any error
 * from them alone, and anything else is a bug (500). A 503 carries the Retry-After it was made with.
 */
export const API_ERRORS = {
  BadRequest: { status: 400, kind: "bad_request", metric: "RefusedBody" },
  PayloadTooLarge: { status: 413, kind: "payload_too_large", metric: "RefusedSize" },
  UnsupportedMediaType: { status: 415, kind: "unsupported_media_type", metric: "RefusedMediaType" },
  /** RFC 6750 §3.1 `invalid_request`: two Authorization values, a token not separated from its scheme. */
  InvalidRequest: { status: 400, kind: "invalid_request", metric: "RefusedAuth", challenge: true },
  /** No usable bearer credentials: RFC 6750 §3.1 answers with a bare challenge. */
  MissingCredentials: { status: 401, kind: "missing_token", metric: "RefusedAuth", challenge: true },
  InvalidToken: { status: 401, kind: "invalid_token", metric: "RefusedAuth", challenge: true },
  /**
   * A kid the issuer's freshly fetched key set does not hold: an invalid token, counted apart so that a
   * rotation the function has not caught up with, or a caller probing kids, shows as such.
   */
  UnknownSigningKey: { status: 401, kind: "invalid_token", metric: "UnknownSigningKey", challenge: true },
  InsufficientScope: { status: 403, kind: "insufficient_scope", metric: "RefusedAuth", challenge: true },
  PlantConflict: { status: 409, kind: "conflict", metric: "Conflict" },
  /** No route of lambda/http/routes.ts has this method and path, or no resource this path names. */
  NotFound: { status: 404, kind: "not_found" },
  StoreUnavailable: { status: 503, kind: "store_unavailable", metric: "StoreUnavailable" },
  /**
   * A kid not in the key set while a refetch is held back after a fresh key set lacked another: only the
   * next fetch can tell a key just rotated in from a bogus kid. Not the issuer's fault, and a 503 counted
   * apart from the 401 of UnknownSigningKey (the gateway's 5xx alarm subtracts it, and must not a 401).
   */
  UnknownSigningKeyHeld: { status: 503, kind: "unknown_signing_key", metric: "UnknownSigningKeyHeld" },
  /** The issuer's own fault: its key set could not be fetched, or is not one this API can take. */
  IssuerUnavailable: { status: 503, kind: "issuer_unavailable", metric: "IssuerUnavailable" },
} as const satisfies Record<string, ApiErrorSpec>;

export type ApiErrorCode = keyof typeof API_ERRORS;

/** The codes answered with a 503: each is made with its Retry-After. */
export type UnavailableCode = {
  [Code in ApiErrorCode]: (typeof API_ERRORS)[Code]["status"] extends 503 ? Code : never;
}[ApiErrorCode];

interface ApiErrorOptions extends ErrorOptions {
  /** When to retry: a 503's `Retry-After`. */
  retryAfterSeconds?: number;
  /** The scope an insufficient_scope challenge names. */
  scope?: string;
}

/**
 * A failure answered with a 4xx or 503: its code's status, kind and metric (API_ERRORS), and its answer's
 * headers beside the content-type. Its `name` is its code's (`InvalidTokenError`), so a log line says what
 * it was, minified or not.
 */
export class ApiError extends Error {
  readonly status: ApiErrorSpec["status"];
  readonly kind: string;
  readonly metric: MetricName | undefined;
  readonly headers: Record<string, string>;
  /** The calls the request made to the store before it failed so: its StoreAttempts metric. */
  storeCalls = 0;

  // A 503 is made with its Retry-After and insufficient_scope with its scope; nothing else takes either.
  constructor(
    code: Exclude<ApiErrorCode, UnavailableCode | "InsufficientScope">,
    message: string,
    options?: ErrorOptions,
  );
  constructor(code: UnavailableCode, message: string, options: ErrorOptions & { retryAfterSeconds: number });
  constructor(code: "InsufficientScope", message: string, options: ErrorOptions & { scope: string });
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    { retryAfterSeconds, scope, ...options }: ApiErrorOptions = {},
  ) {
    super(message, options);
    const { status, kind, metric, challenge }: ApiErrorSpec = API_ERRORS[code];
    this.name = `${code}Error`;
    this.status = status;
    this.kind = kind;
    this.metric = metric;
    this.headers = challenge
      ? { "www-authenticate": bearerChallenge(kind, message, scope) }
      : status === 503
        ? { "retry-after": String(retryAfterSeconds) }
        : {};
  }
}

/**
 * RFC 6750 §3's challenge, in the realm of every one this API sends. Its error_description may hold
 * printable ASCII but `"` and `\`: any other character of the message is written `?` there.
 */
function bearerChallenge(kind: string, message: string, scope: string | undefined): string {
  if (kind === "missing_token") return `Bearer realm="plants"`;
  const text = message.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, "?");
  const description = kind === "invalid_token" ? `, error_description="${text}"` : "";
  return `Bearer realm="plants", error="${kind}"${description}${scope ? `, scope="${scope}"` : ""}`;
}

/**
 * What is known of a create the store did not confirm: `not-written` when no write can have applied
 * (refused, throttled, never sent), `unknown` when one may have (sent, then no answer, or a 5xx).
 */
export type WriteOutcome = "not-written" | "unknown";

/** The store's 503, saying what the caller may do about the write. */
export function storeUnavailable(
  outcome: WriteOutcome,
  retryAfterSeconds: number,
  options?: ErrorOptions,
): ApiError {
  const message =
    outcome === "unknown"
      ? "the plant store did not confirm the write: the plant may have been stored; sending the same request again is safe (200 if it was)"
      : "the plant store is unavailable; nothing was written, retry later";
  return new ApiError("StoreUnavailable", message, { ...options, retryAfterSeconds });
}
