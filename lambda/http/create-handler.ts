import type { Context } from "aws-lambda";
import type { Authenticate } from "../auth/authenticate.ts";
import { RouteNotFoundError } from "../errors.ts";
import { logRequest } from "../log.ts";
import type { MetricCounts } from "../metrics.ts";
import type { PlantStore } from "../store/plant-store.ts";
import {
  type ApiGatewayEvent,
  type ApiGatewayResult,
  toApiGatewayResult,
  toApiRequest,
} from "./api-gateway.ts";
import { toErrorResponse } from "./error-response.ts";
import { OPERATIONS, type OperationContext } from "./operations.ts";
import { describeRoutes, matchRoute } from "./routes.ts";

export interface Dependencies {
  authenticate: Authenticate;
  store: PlantStore;
  /** The metrics' dimension value: the Lambda function's name. */
  functionName?: string;
  /** The version that answers, the `Fault` metric's second dimension (AWS_LAMBDA_FUNCTION_VERSION). */
  functionVersion?: string;
}

export type Handler = (
  event: ApiGatewayEvent,
  context?: Pick<Context, "awsRequestId">,
) => Promise<ApiGatewayResult>;

/**
 * The API's operations (routes.ts, operations.ts) over API Gateway: find the operation, authenticate
 * before reading the body, run it, answer. A request for no operation of the table is a 404, as API
 * Gateway answers it before the function. It never throws: every failure becomes an Error body and one
 * log line, which carries the metrics.
 */
export function createHandler({
  authenticate,
  store,
  functionName = "local",
  functionVersion = "$LATEST",
}: Dependencies): Handler {
  const source = { functionName, functionVersion };
  let coldStart = true;
  return async (event, context) => {
    const startedAt = performance.now();
    const metrics: MetricCounts = coldStart ? { ColdStart: 1 } : {};
    coldStart = false;
    const request = toApiRequest(event, context);
    const operation: OperationContext = { store, storeCalls: { storeAttempts: 0 } };
    let clientId: string | undefined;
    try {
      const route = matchRoute(request.method, request.path);
      if (route === undefined) throw new RouteNotFoundError(`not found: this API serves ${describeRoutes()}`);
      ({ clientId } = await authenticate(request.headers.get("authorization")));
      const { body, metric } = await OPERATIONS[route.operationId](request, operation);
      metrics[metric] = 1;
      metrics.StoreAttempts = operation.storeCalls.storeAttempts;
      logRequest(
        {
          requestId: request.requestId,
          status: 200,
          latencyMs: elapsed(startedAt),
          clientId,
          plantId: operation.plantId,
        },
        source,
        metrics,
      );
      return toApiGatewayResult({ status: 200, body });
    } catch (error) {
      const { response, kind, metric } = toErrorResponse(error, request.requestId);
      if (metric) metrics[metric] = 1;
      metrics.StoreAttempts = operation.storeCalls.storeAttempts;
      logRequest(
        {
          requestId: request.requestId,
          status: response.status,
          latencyMs: elapsed(startedAt),
          errorKind: kind,
          ...(clientId === undefined ? {} : { clientId }),
          ...(operation.plantId === undefined ? {} : { plantId: operation.plantId }),
          ...(response.status >= 500 ? { detail: describeFailure(error) } : {}),
        },
        source,
        metrics,
      );
      return toApiGatewayResult(response);
    }
  };
}

function elapsed(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 100) / 100;
}

function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const causes: string[] = [];
  for (let cause: unknown = error.cause; cause instanceof Error; cause = cause.cause)
    causes.push(cause.message);
  return [error.stack ?? error.message, ...causes.map((message) => `caused by: ${message}`)].join("\n");
}
