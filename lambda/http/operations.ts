import type { MetricName } from "../metrics.ts";
import { createPlant, type PlantStore } from "../plants/create-plant.ts";
import { parseNewPlant } from "../request/parse-new-plant.ts";
import type { ApiRequest } from "./api-gateway.ts";
import type { OperationId } from "./routes.ts";

/** What an operation runs on. */
export interface OperationDependencies {
  store: PlantStore;
}

export interface OperationOutcome {
  /** The 200 answer's body. */
  body: unknown;
  /** What the request did, counted in the metrics. */
  metric: MetricName;
  /** Its calls to the store: the StoreAttempts metric. */
  storeCalls: number;
}

/** An authenticated request the operation has read: which plant it is about, and the work to run. */
export interface ParsedRequest {
  /** For the request's log line. */
  plantId: string;
  run(dependencies: OperationDependencies): Promise<OperationOutcome>;
}

/** One operation: it reads the request (a bad one throws a 4xx of lambda/errors.ts) and says what to run. */
export type Operation = (request: ApiRequest) => Promise<ParsedRequest>;

/**
 * Every operation of the routes table, by its operationId: a route added to the table without its
 * operation here does not compile. A failure is thrown as one of lambda/errors.ts.
 */
export const OPERATIONS: { readonly [Id in OperationId]: Operation } = {
  createPlant: async (request) => {
    const newPlant = await parseNewPlant(request.headers.get("content-type"), request.body);
    return {
      plantId: newPlant.id.toString(),
      async run({ store }) {
        const { plant, replayed, storeCalls } = await createPlant(store, newPlant);
        return { body: plant, metric: replayed ? "Replayed" : "Created", storeCalls };
      },
    };
  },
};
