import type { NewPlant, PlantField } from "./plant.ts";

/** Whether two plants of one id hold the same value in every stored field: a replay, not a conflict. */
export function sameContent(stored: NewPlant, requested: NewPlant, fields: readonly PlantField[]): boolean {
  return fields.every(({ name }) => stored[name] === requested[name]);
}

/** The fields a conflict may lie in, for its message: "name or tag", "name, tag or color". */
export function describeFields(fields: readonly PlantField[]): string {
  const names = fields.map(({ name }) => name);
  const last = names.pop();
  return names.length === 0 ? (last ?? "") : `${names.join(", ")} or ${last}`;
}
