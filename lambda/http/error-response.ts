import {
  BadRequestError,
  DependencyUnavailableError,
  InsufficientScopeError,
  InvalidRequestError,
  InvalidTokenError,
  IssuerUnavailableError,
  MissingCredentialsError,
  PayloadTooLargeError,
  PlantConflictError,
  StoreUnavailableError,
  UnsupportedMediaTypeError,
} from "../errors.ts";
import type { ApiResponse } from "./api-gateway.ts";

export const REALM = "plants";

export interface ErrorResponse {
  response: ApiResponse;
  /** What went wrong, for the log line: the error's class of failure, never a credential. */
  kind: string;
}

/** The one place where failures become answers. Anything unrecognised is a bug: a generic 500. */
export function toErrorResponse(error: unknown, requestId: string): ErrorResponse {
  if (error instanceof MissingCredentialsError) {
    return answer(401, "missing_token", error.message, { "www-authenticate": `Bearer realm="${REALM}"` });
  }
  if (error instanceof InvalidTokenError) {
    return answer(401, "invalid_token", error.message, {
      "www-authenticate": `Bearer realm="${REALM}", error="invalid_token", error_description="${error.message}"`,
    });
  }
  if (error instanceof InsufficientScopeError) {
    return answer(403, "insufficient_scope", error.message, {
      "www-authenticate": `Bearer realm="${REALM}", error="insufficient_scope", scope="${error.requiredScope}"`,
    });
  }
  if (error instanceof InvalidRequestError) {
    return answer(400, "invalid_request", error.message, {
      "www-authenticate": `Bearer realm="${REALM}", error="invalid_request"`,
    });
  }
  if (error instanceof BadRequestError) return answer(400, "bad_request", error.message);
  if (error instanceof PlantConflictError) return answer(409, "conflict", error.message);
  if (error instanceof PayloadTooLargeError) return answer(413, "payload_too_large", error.message);
  if (error instanceof UnsupportedMediaTypeError) return answer(415, "unsupported_media_type", error.message);
  if (error instanceof DependencyUnavailableError) {
    const kind =
      error instanceof StoreUnavailableError
        ? "store_unavailable"
        : error instanceof IssuerUnavailableError
          ? "issuer_unavailable"
          : "unavailable";
    return answer(503, kind, error.message, { "retry-after": String(error.retryAfterSeconds) });
  }
  return answer(500, "internal_error", `internal error; request id ${requestId}`);
}

function answer(
  status: number,
  kind: string,
  message: string,
  headers?: Record<string, string>,
): ErrorResponse {
  return { kind, response: { status, body: { error: status, message }, ...(headers ? { headers } : {}) } };
}
