import type { Context } from "aws-lambda";
import type { Authenticate } from "../auth/authenticate.ts";
import { type CallTimings, withCallTimings } from "../call-timings.ts";
import { ApiError } from "../errors.ts";
import { logRequest, openRequestLogSoon } from "../log.ts";
import type { MetricCounts, MetricName } from "../metrics.ts";
import { type PlantStore, StoreFailedError } from "../store/dynamodb-plant-store.ts";
import {
  type ApiGatewayEvent,
  type ApiGatewayResult,
  type ApiResponse,
  toApiGatewayResult,
  toApiRequest,
} from "./api-gateway.ts";
import { toErrorResponse } from "./error-response.ts";
import { OPERATIONS, type OperationInput } from "./operations.ts";
import { decodeParams, describeRoutes, matchRoute } from "./routes.ts";

export interface Dependencies {
  authenticate: Authenticate;
  store: PlantStore;
  /** The metrics' dimension value: the Lambda function's name. */
  functionName?: string;
  /** The version that answers, the `Fault` metric's second dimension (AWS_LAMBDA_FUNCTION_VERSION). */
  functionVersion?: string;
  /**
   * Background work that must never delay an answer (the issuer's key-set refresh): called as each answer
   * resolves, outside the request's call timings, never awaited; it returns at once, deferring any work.
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
 * The API's operations (routes.ts, operations.ts) over API Gateway: find the route, authenticate with its
 * scope before reading the body, run its operation, answer with its status. A request for no route of the
 * table is a 404, as API Gateway answers it before the function. It never throws: every request ends in
 * one answer and one log line carrying the metrics, both built once, after the request is over.
 */
export function createHandler({
  authenticate,
  store,
  functionName = "local",
  functionVersion = "$LATEST",
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
    const log: OperationInput["log"] = {};
    let clientId: string | undefined;
    let ending: Ending;
    try {
      const match = matchRoute(request.method, request.path);
      if (match === undefined)
        throw new ApiError("NotFound", `not found: this API serves ${describeRoutes()}`);
      const { route } = match;
      const params = decodeParams(match.rawParams);
      ({ clientId } = await authenticate(request.headers.get("authorization"), route.scope));
      const { body, metric, storeCalls } = await OPERATIONS[route.operationId]({
        request,
        params,
        store,
        log,
      });
      ending = { response: { status: route.status, body }, metric, storeCalls };
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
        latencyMs: rounded(performance.now() - startedAt),
        storeMs: rounded(timings.storeMs),
        issuerMs: rounded(timings.issuerMs),
        errorKind: ending.errorKind,
        clientId,
        plantId: log.plantId,
        detail: ending.detail,
      },
      source,
      metrics,
    );
    return toApiGatewayResult(ending.response);
  };
  return (event, context) => {
    // Read as the invocation starts, before anything awaits: Lambda sets it per invocation.
    const traceId = TRACE_ROOT.exec(process.env._X_AMZN_TRACE_ID ?? "")?.[1];
    const answered = withCallTimings((timings) => respond(event, context, traceId, timings));
    // Registered out here, so that the background work's calls are timed as no request's.
    if (afterAnswer) void answered.then(afterAnswer);
    return answered;
  };
}

/** The X-Ray trace id in Lambda's `_X_AMZN_TRACE_ID` (`Root=1-…;Parent=…;Sampled=…`): the log line's way to the trace. */
const TRACE_ROOT = /(?:^|;)\s*Root=(1-[0-9a-f]{8}-[0-9a-f]{24})\s*(?:;|$)/;

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
