/**
 * The JSON of POST /plants. The id goes out as its exact digits, never through a JavaScript number; the
 * answers are read with JSON.parse, which is exact for all the client reads of them: a Plant's fields are
 * strings (the generator refuses any other), and the token's and the error's numbers are small. Which
 * fields there are comes from the contract (client/generated/plant-schema.ts, `npm run generate`).
 */
import { NEW_PLANT_FIELDS, type NewPlant, PLANT_FIELDS, type Plant } from "./generated/plant-schema.ts";
import { plantIdFrom } from "./int64-id.ts";

export type { NewPlant, Plant } from "./generated/plant-schema.ts";

/** The names a NewPlant may have, for the refusal of any other. */
const NEW_PLANT_PROPERTIES: readonly string[] = ["id", ...NEW_PLANT_FIELDS.map(({ name }) => name)];

/**
 * `P`, when it has no property a NewPlant lacks: a literal `{ id, name, tga }` (or a variable of such a
 * type) given to createPlant is a type error naming `tga`, as the API would refuse it.
 */
export type ExactNewPlant<P> = P & { [K in Exclude<keyof P, keyof NewPlant>]: never };

/** The request body, or a TypeError naming what is wrong before anything is sent. @internal */
export function newPlantJson(plant: NewPlant): string {
  if (typeof plant !== "object" || plant === null) throw new TypeError("createPlant needs a plant object");
  const unknown = Object.keys(plant).find((key) => !NEW_PLANT_PROPERTIES.includes(key));
  if (unknown !== undefined) {
    throw new TypeError(
      `unknown property '${unknown.slice(0, 64)}': a NewPlant has only ${NEW_PLANT_PROPERTIES.join(", ")}`,
    );
  }
  let json = `{"id":${plantIdFrom(plant.id)}`;
  const fields = plant as unknown as Record<string, unknown>;
  for (const { name, required } of NEW_PLANT_FIELDS) {
    const value = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (value === undefined && !required) continue;
    if (typeof value !== "string") {
      throw new TypeError(`plant ${name} must be a string${required ? "" : " when given"}`);
    }
    json += `,${JSON.stringify(name)}:${JSON.stringify(value)}`;
  }
  return `${json}}`;
}

/**
 * The Plant in a 200 answer, or undefined when the body is not one. Properties the contract does not
 * name (a field the API gained after this client was generated) are left out. @internal
 */
export function plantFrom(body: string): Plant | undefined {
  const value = jsonObject(body);
  if (value === undefined) return undefined;
  const plant: Record<string, string> = {};
  for (const { name, required } of PLANT_FIELDS) {
    const field = Object.hasOwn(value, name) ? value[name] : undefined;
    if (typeof field === "string") plant[name] = field;
    else if (required || field !== undefined) return undefined;
  }
  return plant as unknown as Plant;
}

/** The fields of a JSON object answer (an error body, a token answer), or an empty record. @internal */
export function jsonFields(body: string): Record<string, unknown> {
  return jsonObject(body) ?? {};
}

function jsonObject(body: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
