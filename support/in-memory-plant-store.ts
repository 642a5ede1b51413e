import type { PlantStore, PutOutcome } from "../lambda/plants/create-plant.ts";
import type { NewPlant } from "../lambda/plants/plant.ts";

/**
 * The tests' one PlantStore fake: a Map, with the conditional-put semantics of the DynamoDB store. Given
 * `fault`, every put runs it instead: the store's failures that a real one gives only by chance (an
 * unconfirmed write, a bug) on demand.
 */
export class InMemoryPlantStore implements PlantStore {
  readonly plants = new Map<bigint, NewPlant>();
  puts = 0;

  constructor(private readonly fault?: (plant: NewPlant) => Promise<PutOutcome>) {}

  async putIfAbsent(plant: NewPlant): Promise<PutOutcome> {
    this.puts++;
    if (this.fault) return this.fault(plant);
    const existing = this.plants.get(plant.id);
    if (existing !== undefined) {
      return { created: false, existing: { ...existing }, afterUnconfirmedWrite: false, calls: 1 };
    }
    this.plants.set(plant.id, { ...plant });
    return { created: true, calls: 1 };
  }
}
