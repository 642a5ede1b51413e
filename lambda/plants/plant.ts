import type { NewPlant, Plant } from "../generated/plant-schema.ts";

/** The plant types and stored fields come from openapi/openapi.yaml: `npm run generate` writes them. */
export { type NewPlant, PLANT_FIELDS, type Plant, type PlantField } from "../generated/plant-schema.ts";

/** The answer to a create: the plant without its id (the generator keeps Plant equal to that). */
export function toPlant({ id: _id, ...plant }: NewPlant): Plant {
  return plant;
}
