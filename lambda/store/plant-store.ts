import type { NewPlant } from "../plants/plant.ts";

export type PutOutcome = { created: true } | { created: false; existing: NewPlant };

/** Where plants are kept. A put never overwrites: an existing id is reported with what it holds. */
export interface PlantStore {
  putIfAbsent(plant: NewPlant): Promise<PutOutcome>;
}
