/**
 * What a failed call throws. Messages are built from the URL, the status and the server's own words,
 * never from a credential: a client secret or a token that shows up in a server's words is masked.
 */
export interface PlantStoreErrorDetails {
  /** The HTTP status; undefined when no answer came (network error, timeout). */
  status?: number | undefined;
  /** The API's `error` field (its HTTP status), when the answer had one. */
  error?: number | undefined;
  /** Seconds the server asked to wait (Retry-After). */
  retryAfterSeconds?: number | undefined;
  /** API Gateway's request id (`apigw-requestid`), to quote when asking about a request. */
  requestId?: string | undefined;
  /** How many requests were sent. */
  attempts?: number | undefined;
  cause?: unknown;
}

export class PlantStoreError extends Error {
  override name = "PlantStoreError";
  readonly status: number | undefined;
  readonly error: number | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly requestId: string | undefined;
  readonly attempts: number;

  constructor(message: string, details: PlantStoreErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.error = details.error;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.requestId = details.requestId;
    this.attempts = details.attempts ?? 1;
  }
}

/** The token endpoint refused the client (400, 401) or could not be reached: no token, so no call. */
export class TokenEndpointError extends PlantStoreError {
  override name = "TokenEndpointError";
  readonly tokenUrl: string;
  /** The OAuth `error` field (invalid_client, invalid_scope, …), when the endpoint gave one. */
  readonly oauthError: string | undefined;

  constructor(
    message: string,
    tokenUrl: string,
    oauthError: string | undefined,
    details: PlantStoreErrorDetails,
  ) {
    super(message, details);
    this.tokenUrl = tokenUrl;
    this.oauthError = oauthError;
  }
}

/** `text` with every credential in `secrets` masked; for server words that go into a message. */
export function masked(text: string, secrets: readonly (string | undefined)[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) result = result.split(secret).join("[redacted]");
  }
  return result;
}
