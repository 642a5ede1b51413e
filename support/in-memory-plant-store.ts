import type { PlantStore, PutOutcome } from "../lambda/plants/create-plant.ts";
import type { NewPlant } from "../lambda/plants/plant.ts";

/** A PlantStore in a Map, with the conditional-put semantics of the DynamoDB one. */
export class InMemoryPlantStore implements PlantStore {
  readonly plants = new Map<bigint, NewPlant>();
  puts = 0;

  async putIfAbsent(plant: NewPlant): Promise<PutOutcome> {
    this.puts++;
    const existing = this.plants.get(plant.id);
    if (existing !== undefined) {
      return { created: false, existing: { ...existing }, afterUnconfirmedWrite: false, calls: 1 };
    }
    this.plants.set(plant.id, { ...plant });
    return { created: true, calls: 1 };
  }
}
