import { type NewPlant, PLANT_FIELDS, type PlantField } from "../plants/plant.ts";

export type AttributeValue = { S?: string; N?: string };
export type Item = Record<string, AttributeValue | undefined>;

/** A plant as a DynamoDB item: the id a number (exact, as its digits), each stored field a string. */
export function toItem(plant: NewPlant, fields: readonly PlantField[] = PLANT_FIELDS): Item {
  const item: Item = { id: { N: plant.id.toString() } };
  for (const { name } of fields) {
    const value = plant[name];
    if (value !== undefined) item[name] = { S: value };
  }
  return item;
}

/** The plant a DynamoDB item holds; an item without its id or a required field is not a plant. */
export function fromItem(item: Item, fields: readonly PlantField[] = PLANT_FIELDS): NewPlant {
  const id = item.id?.N;
  if (id === undefined) throw new Error("a stored plant lacks its id");
  const plant: Partial<Record<PlantField["name"], string>> = {};
  for (const { name, required } of fields) {
    const value = item[name]?.S;
    if (value !== undefined) plant[name] = value;
    else if (required) throw new Error(`a stored plant lacks its ${name}`);
  }
  // Every required field was found above: the fields are the schema's.
  return { ...plant, id: BigInt(id) } as NewPlant;
}
