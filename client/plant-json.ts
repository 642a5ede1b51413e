/**
 * The JSON of POST /plants, written and read without `JSON.stringify` or `JSON.parse` touching the id:
 * the id goes out as its exact digits, and the answer is read by the API's own lossless parser.
 */
import { isObject, type JsonValue, parseJson } from "../lambda/request/lossless-json.ts";
import { type PlantIdInput, plantIdFrom } from "./int64-id.ts";

/** What `createPlant` takes: the specification's NewPlant, with the id in any exact form. */
export interface NewPlant {
  id: PlantIdInput;
  name: string;
  tag?: string | undefined;
}

/** What the API answers: the specification's Plant (it carries no id; one that did would be a bigint). */
export interface Plant {
  name: string;
  tag?: string;
  id?: bigint;
}

/** The request body, or a TypeError naming what is wrong before anything is sent. */
export function newPlantJson(plant: NewPlant): string {
  if (typeof plant !== "object" || plant === null) throw new TypeError("createPlant needs a plant object");
  const id = plantIdFrom(plant.id);
  if (typeof plant.name !== "string") throw new TypeError("plant name must be a string");
  if (plant.tag !== undefined && typeof plant.tag !== "string") {
    throw new TypeError("plant tag must be a string when given");
  }
  const tag = plant.tag === undefined ? "" : `,"tag":${JSON.stringify(plant.tag)}`;
  return `{"id":${id},"name":${JSON.stringify(plant.name)}${tag}}`;
}

/** The Plant in a 200 answer, or undefined when the body is not one. */
export function plantFrom(body: string): Plant | undefined {
  const value = parseOrUndefined(body);
  if (!isObject(value) || typeof value.name !== "string") return undefined;
  const plant: Plant = { name: value.name };
  if (typeof value.tag === "string") plant.tag = value.tag;
  if (typeof value.id === "bigint" || (typeof value.id === "number" && Number.isSafeInteger(value.id))) {
    plant.id = BigInt(value.id);
  }
  return plant;
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
