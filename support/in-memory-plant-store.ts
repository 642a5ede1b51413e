import type { NewPlant } from "../lambda/plants/plant.ts";
import type { PlantStore, PutOutcome } from "../lambda/store/dynamodb-plant-store.ts";

/**
 * The tests' one PlantStore fake: a Map, with the conditional-put semantics of the DynamoDB store. Given
 * `fault`, every put runs it instead: the store's failures that a real one gives only by chance (an
 * unconfirmed write, a bug) on demand.
 */
// The merged interface gives the class every method of the port; the constructor's Proxy answers those it lacks.
export interface InMemoryPlantStore extends PlantStore {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: every method of the port, answered by the Proxy.
export class InMemoryPlantStore implements Pick<PlantStore, "putIfAbsent"> {
  readonly plants = new Map<bigint, NewPlant>();
  puts = 0;

  /**
   * A store method the fake does not implement rejects, naming itself: a new route's store method is
   * tested through the handler against dynalite, and the fake need not follow every method added.
   */
  constructor(private readonly fault?: (plant: NewPlant) => Promise<PutOutcome>) {
    // biome-ignore lint/correctness/noConstructorReturn: the fake answers every PlantStore method name.
    return new Proxy(this, {
      get: (store, name, receiver) =>
        name in store || typeof name === "symbol" || name === "then"
          ? Reflect.get(store, name, receiver)
          : () => Promise.reject(new Error(`the in-memory store fake has no ${name}: test it on dynalite`)),
    });
  }

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
