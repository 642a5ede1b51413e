import type { Context } from "aws-lambda";
import type { Authenticate } from "../auth/authenticate.ts";
import { type CallTimings, withCallTimings } from "../call-timings.ts";
import { DEFAULT_REQUIRED_SCOPE } from "../defaults.ts";
import { ApiError } from "../errors.ts";
import { logRequest, openRequestLogSoon } from "../log.ts";
import type { MetricCounts, MetricName } from "../metrics.ts";
import { type PlantStore, StoreFailedError } from "../plants/create-plant.ts";
import type { SampledTracing } from "../tracing/sampled-tracing.ts";
import { invocationTraceHeader } from "../tracing/trace-header.ts";
import {
  type ApiGatewayEvent,
  type ApiGatewayResult,
  type ApiResponse,
  toApiGatewayResult,
  toApiRequest,
} from "./api-gateway.ts";
import { toErrorResponse } from "./error-response.ts";
import { OPERATIONS } from "./operations.ts";
import { describeRoutes, matchRoute } from "./routes.ts";

export interface Dependencies {
  authenticate: Authenticate;
  /** The scope every route requires (config.requiredScope), until the route table names one per route. */
  requiredScope?: string;
  store: PlantStore;
  /** The metrics' dimension value: the Lambda function's name. */
  functionName?: string;
  /** Runs each invocation inside its X-Ray trace (lambda/tracing/); without it, nothing is traced. */
  traceInvocation?: SampledTracing["run"];
  /** The version that answers, the `Fault` metric's second dimension (AWS_LAMBDA_FUNCTION_VERSION). */
  functionVersion?: string;
  /**
   * Background work that must never delay an answer (the issuer's key-set refresh): called as each answer
   * resolves, outside the invocation's trace, never awaited; it returns at once, deferring any work.
   */
  afterAnswer?: () => void;
}

export type Handler = (
  event: ApiGatewayEvent,
  context?: Pick<Context, "awsRequestId">,
) => Promise<ApiGatewayResult>;

/** How a request ended: its answer, the metric it counts under, and for a failure what the log says. */
interface Ending {
  response: ApiResponse;
  metric: MetricName | undefined;
  storeCalls: number;
  errorKind?: string;
  detail?: string;
}

/**
 * The API's operations (routes.ts, operations.ts) over API Gateway: find the operation, authenticate
 * before reading the body, run it, answer. A request for no operation of the table is a 404, as API
 * Gateway answers it before the function. It never throws: every request, answered or failed, ends in
 * one answer and one log line carrying the metrics, both built once, after the request is over.
 */
export function createHandler({
  authenticate,
  requiredScope = DEFAULT_REQUIRED_SCOPE,
  store,
  functionName = "local",
  functionVersion = "$LATEST",
  traceInvocation,
  afterAnswer,
}: Dependencies): Handler {
  const source = { functionName, functionVersion };
  let coldStart = true;
  const respond = async (
    event: ApiGatewayEvent,
    context: Parameters<Handler>[1],
    traceId: string | undefined,
    timings: CallTimings,
  ): Promise<ApiGatewayResult> => {
    const startedAt = performance.now();
    if (coldStart) openRequestLogSoon();
    const metrics: MetricCounts = coldStart ? { ColdStart: 1 } : {};
    coldStart = false;
    const request = toApiRequest(event, context);
    // The log line's keys, learnt as the request goes (as a logger's appended keys, per request).
    let clientId: string | undefined;
    let plantId: string | undefined;
    let ending: Ending;
    try {
      const route = matchRoute(request.method, request.path);
      if (route === undefined)
        throw new ApiError("RouteNotFound", `not found: this API serves ${describeRoutes()}`);
      ({ clientId } = await authenticate(request.headers.get("authorization"), requiredScope));
      const parsed = await OPERATIONS[route.operationId](request);
      plantId = parsed.plantId;
      const { body, metric, storeCalls } = await parsed.run({ store });
      ending = { response: { status: 200, body }, metric, storeCalls };
    } catch (error) {
      ending = failureEnding(error, request.requestId);
    }

    if (ending.metric) metrics[ending.metric] = 1;
    metrics.StoreAttempts = ending.storeCalls;
    // A key left undefined is not written: JSON.stringify drops it.
    logRequest(
      {
        requestId: request.requestId,
        traceId,
        status: ending.response.status,
        latencyMs: elapsed(startedAt),
        storeMs: rounded(timings.storeMs),
        issuerMs: rounded(timings.issuerMs),
        errorKind: ending.errorKind,
        clientId,
        plantId,
        detail: ending.detail,
      },
      source,
      metrics,
    );
    return toApiGatewayResult(ending.response);
  };
  return (event, context) => {
    // Read as the invocation starts: Lambda sets it per invocation.
    const trace = invocationTraceHeader();
    const respondTraced = () => withCallTimings((timings) => respond(event, context, trace?.root, timings));
    const answered = traceInvocation ? traceInvocation(trace, respondTraced) : respondTraced();
    // Registered here, outside the invocation's trace: the background work is no call of this request.
    if (afterAnswer) void answered.then(afterAnswer);
    return answered;
  };
}

/** A failure as lambda/http/error-response.ts answers it; for a 5xx, what failed underneath. */
function failureEnding(error: unknown, requestId: string): Ending {
  const { response, kind, metric } = toErrorResponse(error, requestId);
  return {
    response,
    metric,
    storeCalls: error instanceof ApiError || error instanceof StoreFailedError ? error.storeCalls : 0,
    errorKind: kind,
    ...(response.status >= 500 ? { detail: describeFailure(error) } : {}),
  };
}

function elapsed(startedAt: number): number {
  return rounded(performance.now() - startedAt);
}

function rounded(ms: number): number {
  return Math.round(ms * 100) / 100;
}

function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  let detail = error.stack ?? error.message;
  for (let cause: unknown = error.cause; cause instanceof Error; cause = cause.cause) {
    detail += `\ncaused by: ${cause.message}`;
  }
  return detail;
}
