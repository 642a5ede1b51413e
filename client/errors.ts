/**
 * What a failed call throws: a PlantStoreError (a TokenEndpointError when it was the token endpoint's),
 * with a `kind` to switch on, the server's own message apart, and never a credential: a client secret or
 * a token that shows up in a server's words is masked, and no error keeps the runtime's or a library's own
 * error as its `cause` (a fetch error can hold the URL it failed on, an OAuth library's the body it read).
 */

/**
 * What went wrong, to switch on:
 * - `invalid-request`: 400, 413, 415, 422 or another 4xx below: the request is refused as it is; fix it.
 * - `unauthorized` (401), `forbidden` (403), `not-found` (404: a wrong baseUrl), `conflict` (409: another
 *   plant is stored under that id), `throttled` (429), `unavailable` (502, 503, 504), `server-error` (500
 *   and any other 5xx).
 * - `redirect`: a 3xx, never followed (the URL configured is not the API's or the token endpoint's own).
 * - `unexpected-answer`: an answer the contract does not have (a 200 that is not a Plant, a body over
 *   MAX_ANSWER_BYTES, another status).
 * - `network`: no answer at all (refused, reset, DNS; in a browser also a refused origin, see the message).
 * - `timeout`: no answer within `retry.attemptTimeoutMs`, or the call's `retry.deadlineMs` passed.
 */
export type PlantStoreErrorKind =
  | "invalid-request"
  | "unauthorized"
  | "forbidden"
  | "not-found"
  | "conflict"
  | "throttled"
  | "unavailable"
  | "server-error"
  | "redirect"
  | "unexpected-answer"
  | "network"
  | "timeout";

export interface PlantStoreErrorDetails {
  kind: PlantStoreErrorKind;
  /** The HTTP status; undefined when no answer came (`network`, `timeout`). */
  status?: number | undefined;
  /** The server's own words (the API's `message`, the token endpoint's `error_description`), masked. */
  serverMessage?: string | undefined;
  /** Seconds the server asked to wait (Retry-After). */
  retryAfterSeconds?: number | undefined;
  /** API Gateway's request id (`apigw-requestid`), to quote when asking about a request. */
  requestId?: string | undefined;
  /** How many requests were sent. */
  attempts?: number | undefined;
}

export class PlantStoreError extends Error {
  override name = "PlantStoreError";
  readonly kind: PlantStoreErrorKind;
  readonly status: number | undefined;
  readonly serverMessage: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly requestId: string | undefined;
  /** How many requests were sent (0 when none could be: the deadline passed first). */
  readonly attempts: number;

  constructor(message: string, details: PlantStoreErrorDetails) {
    super(message);
    this.kind = details.kind;
    this.status = details.status;
    this.serverMessage = details.serverMessage;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.requestId = details.requestId;
    this.attempts = details.attempts ?? 1;
  }
}

/** The token endpoint refused the client, answered no token, or could not be reached: no token, so no call. */
export class TokenEndpointError extends PlantStoreError {
  override name = "TokenEndpointError";
  readonly tokenUrl: string;
  /** The OAuth `error` field (invalid_client, invalid_scope, …), when the endpoint gave one. */
  readonly oauthError: string | undefined;

  constructor(
    message: string,
    details: PlantStoreErrorDetails & { tokenUrl: string; oauthError?: string | undefined },
  ) {
    super(message, details);
    this.tokenUrl = details.tokenUrl;
    this.oauthError = details.oauthError;
  }
}

/** What an answer's status says went wrong. @internal */
export function kindOfStatus(status: number): PlantStoreErrorKind {
  const kinds: Record<number, PlantStoreErrorKind> = {
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    409: "conflict",
    429: "throttled",
    502: "unavailable",
    503: "unavailable",
    504: "unavailable",
  };
  const kind = kinds[status];
  if (kind) return kind;
  if (status >= 300 && status < 400) return "redirect";
  if (status >= 400 && status < 500) return "invalid-request";
  if (status >= 500 && status < 600) return "server-error";
  return "unexpected-answer";
}
