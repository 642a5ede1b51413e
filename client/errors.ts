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

/** What a masked credential reads as in a message. */
const REDACTED = "[redacted]";

/**
 * Every form in which a server may echo `credential`: as it is, URL-encoded (either hex case),
 * form-encoded, and base64-encoded (as inside an echoed Authorization header).
 */
export function credentialForms(credential: string): string[] {
  const encoded = encodeURIComponent(credential);
  const formEncodedCredential = formEncoded(credential);
  const lowerHex = (text: string) =>
    text.replace(/%[0-9A-F]{2}/g, (percentEscape) => percentEscape.toLowerCase());
  return [
    credential,
    encoded,
    lowerHex(encoded),
    formEncodedCredential,
    lowerHex(formEncodedCredential),
    base64(credential),
  ];
}

/** `value` as application/x-www-form-urlencoded writes it (a space as `+`, uppercase hex escapes). */
export function formEncoded(value: string): string {
  return new URLSearchParams([["", value]]).toString().slice(1);
}

/** Base64 of the UTF-8 bytes, as btoa cannot take characters beyond Latin-1. */
export function base64(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * `text` with every credential in `secrets` masked, in every form `secrets` lists (see credentialForms);
 * for server words that go into a message or a property. Longest first, so that no form is left half masked.
 */
export function masked(text: string, secrets: readonly (string | undefined)[]): string {
  let result = text;
  const forms = secrets.filter((secret): secret is string => secret !== undefined && secret.length >= 4);
  for (const secret of forms.sort((a, b) => b.length - a.length))
    result = result.split(secret).join(REDACTED);
  return result;
}

/** Server words for a message: masked first, then cut to `maxLength`, so that a cut never splits a credential out of its mask. */
export function maskedExcerpt(text: string, secrets: readonly string[], maxLength = 200): string {
  const safe = masked(text, secrets);
  return safe.length > maxLength ? `${safe.slice(0, maxLength)}…` : safe;
}
