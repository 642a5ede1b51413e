import type { NewPlant } from "../plants/plant.ts";

/**
 * `afterUnconfirmedWrite`: an earlier attempt of this put may have written (no answer came), so an
 * existing plant of the same content is most likely that write, not an earlier request's.
 */
export type PutOutcome =
  | { created: true }
  | { created: false; existing: NewPlant; afterUnconfirmedWrite?: true };

/** A request's count of its calls to the store, failed ones included: its StoreAttempts metric. */
export interface StoreAttempts {
  storeAttempts: number;
}

/** Where plants are kept. A put never overwrites: an existing id is reported with what it holds. */
export interface PlantStore {
  /** `counter.storeAttempts` goes up by one for every call to the store, failed ones included. */
  putIfAbsent(plant: NewPlant, counter?: StoreAttempts): Promise<PutOutcome>;
}
