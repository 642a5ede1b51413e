import { PlantConflictError } from "../errors.ts";
import type { PlantStore, StoreAttempts } from "../store/plant-store.ts";
import { type NewPlant, PLANT_FIELDS, type Plant, type PlantField, toPlant } from "./plant.ts";
import { describeFields, sameContent } from "./plant-fields.ts";

export interface CreateOutcome {
  plant: Plant;
  /** The same plant was created before, by another request: this one changed nothing. */
  replayed: boolean;
}

/**
 * Creates a plant. Creating the same plant again (same id, same value in every stored field) is a safe
 * replay and answers as the first create did; the same id with other content is a conflict. Nothing is
 * ever overwritten: the store's write is conditional. `fields` are the schema's (PLANT_FIELDS).
 */
export async function createPlant(
  store: PlantStore,
  plant: NewPlant,
  counter?: StoreAttempts,
  fields: readonly PlantField[] = PLANT_FIELDS,
): Promise<CreateOutcome> {
  const outcome = await store.putIfAbsent(plant, counter);
  if (!outcome.created && !sameContent(outcome.existing, plant, fields)) {
    throw new PlantConflictError(
      `a plant with id ${plant.id} already exists with another ${describeFields(fields)}`,
    );
  }
  return { plant: toPlant(plant), replayed: !outcome.created && !outcome.afterUnconfirmedWrite };
}
