import type { NewPlant } from "../plants/plant.ts";

/**
 * `afterUnconfirmedWrite`: an earlier attempt of this put may have written (no answer came), so an
 * existing plant of the same content is most likely that write, not an earlier request's.
 */
export type PutOutcome =
  | { created: true }
  | { created: false; existing: NewPlant; afterUnconfirmedWrite?: true };

/** What a store reports about one put as it goes: `storeAttempts` counts its calls to the store. */
export interface StoreObserver {
  storeAttempts: number;
}

/** Where plants are kept. A put never overwrites: an existing id is reported with what it holds. */
export interface PlantStore {
  /** `observer.storeAttempts` goes up by one for every call to the store, failed ones included. */
  putIfAbsent(plant: NewPlant, observer?: StoreObserver): Promise<PutOutcome>;
}
