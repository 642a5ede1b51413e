import type { Context } from "aws-lambda";
import type { Authenticate } from "../auth/authenticate.ts";
import { logRequest } from "../log.ts";
import type { MetricCounts } from "../metrics.ts";
import { createPlant } from "../plants/create-plant.ts";
import { parseNewPlant } from "../request/parse-new-plant.ts";
import type { PlantStore, StoreObserver } from "../store/plant-store.ts";
import {
  type ApiGatewayEvent,
  type ApiGatewayResult,
  toApiGatewayResult,
  toApiRequest,
} from "./api-gateway.ts";
import { toErrorResponse } from "./error-response.ts";
import { describeRoutes, matchRoute } from "./routes.ts";

export interface Dependencies {
  authenticate: Authenticate;
  store: PlantStore;
  /** The metrics' dimension value: the Lambda function's name. */
  functionName?: string;
}

export type Handler = (
  event: ApiGatewayEvent,
  context?: Pick<Context, "awsRequestId">,
) => Promise<ApiGatewayResult>;

/**
 * The API's operations (lambda/http/routes.ts) over API Gateway; today POST /plants: authenticate before
 * reading the body, parse, create, answer. A request for no operation of the table is a 404, as API
 * Gateway answers it before the function. It never throws: every failure becomes an Error body and one
 * log line, which carries the metrics.
 */
export function createHandler({ authenticate, store, functionName = "local" }: Dependencies): Handler {
  let coldStart = true;
  return async (event, context) => {
    const startedAt = performance.now();
    const metrics: MetricCounts = coldStart ? { ColdStart: 1 } : {};
    coldStart = false;
    const storeCalls: StoreObserver = { storeAttempts: 0 };
    const request = toApiRequest(event, context);
    if (matchRoute(request.method, request.path) === undefined) {
      logRequest(
        { requestId: request.requestId, status: 404, latencyMs: elapsed(startedAt), errorKind: "no_route" },
        functionName,
        metrics,
      );
      return toApiGatewayResult({
        status: 404,
        body: { error: 404, message: `not found: this API serves ${describeRoutes()}` },
      });
    }
    let clientId: string | undefined;
    let plantId: string | undefined;
    try {
      ({ clientId } = await authenticate(request.headers.get("authorization")));
      const newPlant = parseNewPlant(request.headers.get("content-type"), request.body);
      plantId = newPlant.id.toString();
      const { plant, replayed } = await createPlant(store, newPlant, storeCalls);
      metrics[replayed ? "Replayed" : "Created"] = 1;
      metrics.StoreAttempts = storeCalls.storeAttempts;
      logRequest(
        { requestId: request.requestId, status: 200, latencyMs: elapsed(startedAt), clientId, plantId },
        functionName,
        metrics,
      );
      return toApiGatewayResult({ status: 200, body: plant });
    } catch (error) {
      const { response, kind, metric } = toErrorResponse(error, request.requestId);
      if (metric) metrics[metric] = 1;
      metrics.StoreAttempts = storeCalls.storeAttempts;
      logRequest(
        {
          requestId: request.requestId,
          status: response.status,
          latencyMs: elapsed(startedAt),
          errorKind: kind,
          ...(clientId === undefined ? {} : { clientId }),
          ...(plantId === undefined ? {} : { plantId }),
          ...(response.status >= 500 ? { detail: describeFailure(error) } : {}),
        },
        functionName,
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
