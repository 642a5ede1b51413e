import { ApiError } from "../errors.ts";

/** RFC 6750 §2.1: `credentials = "Bearer" 1*SP b64token`, the scheme name case-insensitive. */
const BEARER_CREDENTIALS = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
/** The Bearer scheme named at the start of a value or of one of several joined with commas. */
const NAMES_BEARER_SCHEME = /(?:^|,)[ \t]*Bearer(?![!#$%&'*+\-.^_`|~0-9A-Za-z])/i;

/**
 * The token of an Authorization value. No value, or another scheme (Basic, ...), is no bearer
 * credential at all: 401 with a bare challenge. A value naming the Bearer scheme that is not exactly
 * one `Bearer <token>` (two values joined with a comma, a tab after the scheme, no token) is a
 * malformed request: 400 invalid_request (RFC 6750 §3.1).
 */
export function bearerToken(authorizationHeader: string | undefined): string {
  const value = withoutOptionalWhitespace(authorizationHeader ?? "");
  if (value === "") throw new ApiError("MissingCredentials", "the Authorization header is missing");
  const token = BEARER_CREDENTIALS.exec(value)?.[1];
  if (token !== undefined) return token;
  if (NAMES_BEARER_SCHEME.test(value)) {
    throw new ApiError(
      "InvalidRequest",
      "the Authorization header must be exactly one 'Bearer <token>': the scheme, one or more spaces, the token",
    );
  }
  throw new ApiError("MissingCredentials", "the Authorization header must carry a Bearer token");
}

/**
 * A field value without the optional whitespace around it (RFC 9110 §5.5: spaces and tabs). A loop, not a
 * regular expression: `/[ \t]+$/` retries at every space of a long run, quadratic in a crafted header.
 */
function withoutOptionalWhitespace(value: string): string {
  let start = 0;
  let end = value.length;
  while (value[start] === " " || value[start] === "\t") start++;
  while (end > start && (value[end - 1] === " " || value[end - 1] === "\t")) end--;
  return value.slice(start, end);
}
