import type { MetricName } from "../metrics.ts";
import { createPlant } from "../plants/create-plant.ts";
import { parseNewPlant } from "../request/parse-new-plant.ts";
import type { PlantStore } from "../store/dynamodb-plant-store.ts";
import type { ApiRequest } from "./api-gateway.ts";
import type { OperationId } from "./routes.ts";

/** What an operation is given: the authenticated request, its decoded path parameters, the store. */
export interface OperationInput {
  request: ApiRequest;
  /** The route's `{name}` segments, percent-decoded. */
  params: Record<string, string>;
  store: PlantStore;
  /** The request's log line: the operation names the plant it is about as soon as it knows it. */
  log: { plantId?: string };
}

export interface OperationOutcome {
  /** The success answer's body; its status is the route's. */
  body: unknown;
  /** What the request did, counted in the metrics, if anything. */
  metric?: MetricName;
  /** Its calls to the store: the StoreAttempts metric. */
  storeCalls: number;
}

/** One operation: a bad request throws a 4xx of lambda/errors.ts, a store fault its 503 or a bug. */
export type Operation = (input: OperationInput) => Promise<OperationOutcome>;

/**
 * Every operation of the routes table, by its operationId: a route added to the table without its
 * operation here does not compile.
 */
export const OPERATIONS: { readonly [Id in OperationId]: Operation } = {
  createPlant: async ({ request, store, log }) => {
    const newPlant = await parseNewPlant(request.headers.get("content-type"), request.body);
    log.plantId = newPlant.id.toString();
    const { plant, replayed, storeCalls } = await createPlant(store, newPlant);
    return { body: plant, metric: replayed ? "Replayed" : "Created", storeCalls };
  },
};
