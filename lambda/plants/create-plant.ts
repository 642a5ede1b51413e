import { ApiError } from "../errors.ts";
import type { PlantStore } from "../store/dynamodb-plant-store.ts";
import { type NewPlant, PLANT_FIELDS, type Plant, type PlantField, toPlant } from "./plant.ts";

export interface CreateOutcome {
  plant: Plant;
  /** The same plant was created before, by another request: this one changed nothing. */
  replayed: boolean;
  storeCalls: number;
}

/**
 * Creates a plant. Creating the same plant again (same id, same value in every stored field) is a safe
 * replay and answers as the first create did; the same id with other content is a conflict. Nothing is
 * ever overwritten: the store's write is conditional. `fields` are the schema's (PLANT_FIELDS).
 */
export async function createPlant(
  store: PlantStore,
  plant: NewPlant,
  fields: readonly PlantField[] = PLANT_FIELDS,
): Promise<CreateOutcome> {
  const outcome = await store.putIfAbsent(plant);
  const storeCalls = outcome.calls;
  if (outcome.created) return { plant: toPlant(plant), replayed: false, storeCalls };
  const { existing } = outcome;
  if (!fields.every(({ name }) => existing[name] === plant[name])) {
    const conflict = new ApiError(
      "PlantConflict",
      `a plant with id ${plant.id} already exists with another ${describeFields(fields)}`,
    );
    conflict.storeCalls = storeCalls;
    throw conflict;
  }
  return { plant: toPlant(plant), replayed: !outcome.afterUnconfirmedWrite, storeCalls };
}

/** The fields a conflict may lie in, for its message: "name or tag", "name, tag or color". */
export function describeFields(fields: readonly PlantField[]): string {
  const names = fields.map(({ name }) => name);
  const last = names.pop();
  return names.length === 0 ? (last ?? "") : `${names.join(", ")} or ${last}`;
}
