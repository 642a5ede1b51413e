import type { NewPlant } from "../lambda/plants/plant.ts";
import type { PlantStore, PutOutcome, StoreAttempts } from "../lambda/store/plant-store.ts";

/** A PlantStore in a Map, with the conditional-put semantics of the DynamoDB one. */
export class InMemoryPlantStore implements PlantStore {
  readonly plants = new Map<bigint, NewPlant>();
  puts = 0;

  async putIfAbsent(plant: NewPlant, counter?: StoreAttempts): Promise<PutOutcome> {
    this.puts++;
    if (counter) counter.storeAttempts++;
    const existing = this.plants.get(plant.id);
    if (existing !== undefined) return { created: false, existing: { ...existing } };
    this.plants.set(plant.id, { ...plant });
    return { created: true };
  }
}
