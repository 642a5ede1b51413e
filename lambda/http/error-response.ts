import { ApiError } from "../errors.ts";
import { FAULT_METRIC, type MetricName } from "../metrics.ts";
import type { ApiResponse } from "./api-gateway.ts";

export interface ErrorResponse {
  response: ApiResponse;
  /** What went wrong, for the log line: the error's class of failure, never a credential. */
  kind: string;
  /** The metric the failure counts under, if any. */
  metric: MetricName | undefined;
}

/**
 * The one place where failures become answers: an ApiError's status, headers, kind and metric are its
 * class's (lambda/errors.ts); anything else is a bug, a generic 500 counted as `Fault`, which rolls a
 * rollout back.
 */
export function toErrorResponse(error: unknown, requestId: string): ErrorResponse {
  if (!(error instanceof ApiError)) {
    const message = `internal error; request id ${requestId}`;
    return {
      kind: "internal_error",
      metric: FAULT_METRIC,
      response: { status: 500, body: { error: 500, message } },
    };
  }
  const { status, headers, kind, metric, message } = error;
  const withHeaders = Object.keys(headers).length > 0 ? { headers } : {};
  return { kind, metric, response: { status, body: { error: status, message }, ...withHeaders } };
}
