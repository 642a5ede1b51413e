import { PlantConflictError } from "../errors.ts";
import type { PlantStore, StoreObserver } from "../store/plant-store.ts";
import { type NewPlant, type Plant, toPlant } from "./plant.ts";

export interface CreateOutcome {
  plant: Plant;
  /** The same plant was created before, by another request: this one changed nothing. */
  replayed: boolean;
}

/**
 * Creates a plant. Creating the same plant again (same id, name and tag) is a safe replay and
 * answers as the first create did; the same id with other content is a conflict. Nothing is ever
 * overwritten: the store's write is conditional.
 */
export async function createPlant(
  store: PlantStore,
  plant: NewPlant,
  observer?: StoreObserver,
): Promise<CreateOutcome> {
  const outcome = await store.putIfAbsent(plant, observer);
  if (!outcome.created && !sameContent(outcome.existing, plant)) {
    throw new PlantConflictError(`a plant with id ${plant.id} already exists with another name or tag`);
  }
  return { plant: toPlant(plant), replayed: !outcome.created && !outcome.afterUnconfirmedWrite };
}

function sameContent(stored: NewPlant, requested: NewPlant): boolean {
  return stored.name === requested.name && stored.tag === requested.tag;
}
