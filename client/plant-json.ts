/**
 * The JSON of POST /plants, written and read without `JSON.stringify` or `JSON.parse` touching the id:
 * the id goes out as its exact digits, and the answer is read by the API's own lossless parser. Which
 * fields there are comes from the contract (client/generated/plant-schema.ts, `npm run generate`).
 */
import { isObject } from "../lambda/is-object.ts";
import { type JsonValue, parseJson } from "../lambda/request/lossless-json.ts";
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

/** The request body, or a TypeError naming what is wrong before anything is sent. */
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
    const value = fields[name];
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
 * name (a field the API gained after this client was generated) are left out.
 */
export function plantFrom(body: string): Plant | undefined {
  const value = parseOrUndefined(body);
  if (!isObject(value)) return undefined;
  const plant: Record<string, string> = {};
  for (const { name, required } of PLANT_FIELDS) {
    const field = value[name];
    if (typeof field === "string") plant[name] = field;
    else if (required || field !== undefined) return undefined;
  }
  return plant as unknown as Plant;
}

/** The fields of a JSON object answer (an error body, a token answer), or an empty record. */
export function jsonFields(body: string): Record<string, JsonValue> {
  const value = parseOrUndefined(body);
  return isObject(value) ? value : {};
}

function parseOrUndefined(body: string): JsonValue | undefined {
  try {
    return parseJson(body);
  } catch {
    return undefined;
  }
}
