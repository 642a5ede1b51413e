import {
  ApiError,
  DependencyUnavailableError,
  InsufficientScopeError,
  InvalidRequestError,
  InvalidTokenError,
  MissingCredentialsError,
} from "../errors.ts";
import { FAULT_METRIC, type MetricName } from "../metrics.ts";
import type { ApiResponse } from "./api-gateway.ts";

const REALM = "plants";

export interface ErrorResponse {
  response: ApiResponse;
  /** What went wrong, for the log line: the error's class of failure, never a credential. */
  kind: string;
  /** The metric the failure counts under, if any. */
  metric: MetricName | undefined;
}

/**
 * The one place where failures become answers: an ApiError's status, kind and metric are its class's
 * (lambda/errors.ts); anything else is a bug, a generic 500 counted as `Fault`, which rolls a rollout back.
 */
export function toErrorResponse(error: unknown, requestId: string): ErrorResponse {
  if (!(error instanceof ApiError)) {
    return answer(500, "internal_error", FAULT_METRIC, `internal error; request id ${requestId}`);
  }
  return answer(error.status, error.kind, error.metric, error.message, extraHeaders(error));
}

/** RFC 6750's challenges for the refusals of a token, and Retry-After for an unavailable dependency. */
function extraHeaders(error: ApiError): Record<string, string> | undefined {
  if (error instanceof DependencyUnavailableError) return { "retry-after": String(error.retryAfterSeconds) };
  if (error instanceof MissingCredentialsError) return { "www-authenticate": `Bearer realm="${REALM}"` };
  const challenge = `Bearer realm="${REALM}", error="${error.kind}"`;
  if (error instanceof InvalidTokenError) {
    return { "www-authenticate": `${challenge}, error_description="${error.message}"` };
  }
  if (error instanceof InsufficientScopeError) {
    return { "www-authenticate": `${challenge}, scope="${error.requiredScope}"` };
  }
  if (error instanceof InvalidRequestError) return { "www-authenticate": challenge };
  return undefined;
}

function answer(
  status: number,
  kind: string,
  metric: MetricName | undefined,
  message: string,
  headers?: Record<string, string>,
): ErrorResponse {
  return {
    kind,
    metric,
    response: { status, body: { error: status, message }, ...(headers ? { headers } : {}) },
  };
}
