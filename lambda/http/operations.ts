import type { MetricName } from "../metrics.ts";
import { createPlant } from "../plants/create-plant.ts";
import { parseNewPlant } from "../request/parse-new-plant.ts";
import type { PlantStore, StoreAttempts } from "../store/plant-store.ts";
import type { ApiRequest } from "./api-gateway.ts";
import type { OperationId } from "./routes.ts";

/** What an operation runs on: the store, and the request's count of its calls to it. */
export interface OperationDependencies {
  store: PlantStore;
  counter: StoreAttempts;
}

export interface OperationOutcome {
  /** The 200 answer's body. */
  body: unknown;
  /** What the request did, counted in the metrics. */
  metric: MetricName;
}

/** An authenticated request the operation has read: which plant it is about, and the work to run. */
export interface ParsedRequest {
  /** For the request's log line. */
  plantId: string;
  run(dependencies: OperationDependencies): Promise<OperationOutcome>;
}

/** One operation: it reads the request (a bad one throws a 4xx of lambda/errors.ts) and says what to run. */
export type Operation = (request: ApiRequest) => ParsedRequest;

/**
 * Every operation of the routes table, by its operationId: a route added to the table without its
 * operation here does not compile. A failure is thrown as one of lambda/errors.ts.
 */
export const OPERATIONS: { readonly [Id in OperationId]: Operation } = {
  createPlant: (request) => {
    const newPlant = parseNewPlant(request.headers.get("content-type"), request.body);
    return {
      plantId: newPlant.id.toString(),
      async run({ store, counter }) {
        const { plant, replayed } = await createPlant(store, newPlant, counter);
        return { body: plant, metric: replayed ? "Replayed" : "Created" };
      },
    };
  },
};
