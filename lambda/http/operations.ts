import type { MetricName } from "../metrics.ts";
import { createPlant } from "../plants/create-plant.ts";
import { parseNewPlant } from "../request/parse-new-plant.ts";
import type { PlantStore, StoreAttempts } from "../store/plant-store.ts";
import type { ApiRequest } from "./api-gateway.ts";
import type { OperationId } from "./routes.ts";

export interface OperationContext {
  store: PlantStore;
  storeCalls: StoreAttempts;
  /** Set by an operation as soon as it knows which plant the request is about, for the log line. */
  plantId?: string;
}

export interface OperationOutcome {
  /** The 200 answer's body. */
  body: unknown;
  /** What the request did, counted in the metrics. */
  metric: MetricName;
}

/** One authenticated request of an operation; a failure is thrown as one of lambda/errors.ts. */
export type Operation = (request: ApiRequest, context: OperationContext) => Promise<OperationOutcome>;

/**
 * Every operation of the routes table, by its operationId: a route added to the table without its
 * operation here does not compile.
 */
export const OPERATIONS: { readonly [Id in OperationId]: Operation } = {
  createPlant: async (request, context) => {
    const newPlant = parseNewPlant(request.headers.get("content-type"), request.body);
    context.plantId = newPlant.id.toString();
    const { plant, replayed } = await createPlant(context.store, newPlant, context.storeCalls);
    return { body: plant, metric: replayed ? "Replayed" : "Created" };
  },
};
