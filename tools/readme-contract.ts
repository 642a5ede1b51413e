/**
 * The parts of README.md that restate the contract or the code, written by `npm run generate` (after the
 * generated code): the table of NewPlant's fields from openapi/openapi.yaml, between its two marker
 * comments; the 409 example message, which names the fields a conflict may lie in as the function does
 * (lambda/plants/create-plant.ts); the body limit of the 413 row, and the local run's port. A field added
 * to the document appears in both at the next generate; test/docs/readme-contract.test.ts fails when the
 * README was not regenerated.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describeFields } from "../lambda/plants/create-plant.ts";
import type { PlantField } from "../lambda/plants/plant.ts";
import { MAX_BODY_BYTES } from "../lambda/request/request-body.ts";
import { DEFAULT_PORT } from "../local/local-settings.ts";
import { propertiesOf, readOpenApi, type Schema } from "./generate-validator.ts";

export { readOpenApi as readOpenApiDocument };

const README_PATH = fileURLToPath(new URL("../README.md", import.meta.url));
export const FIELDS_START =
  "<!-- NewPlant's fields: written by npm run generate from openapi/openapi.yaml -->";
export const FIELDS_END = "<!-- end of NewPlant's fields -->";
/** The 409 row, its text and its example, up to the fields each names. */
const CONFLICT_EXAMPLE = /(exists with another )[^`;]*/g;
/** The 413 row's limit, and the local run's URLs. */
const BODY_LIMIT = /(the body is over |at most )\d+( bytes| are accepted)/g;
const LOCAL_URL = /(http:\/\/127\.0\.0\.1:)\d+/g;
/** What every PlantText is, beyond its length (the schema's own description says why). */
const PLANT_TEXT_RULES = "a `PlantText`: not blank, no control characters, no U+FFFD";

function rules({ required, schema }: { required: boolean; schema: Schema }): string {
  const parts = [required ? "required" : "optional"];
  if (schema.type === "integer" && schema.format === "int64") {
    parts.push(`exact signed 64-bit: \`${schema.minimum}..${schema.maximum}\`, never rounded`);
  }
  if (schema.minLength !== undefined && schema.maxLength !== undefined) {
    parts.push(`${schema.minLength} to ${schema.maxLength} characters`);
  }
  const allOf = (schema.allOf as Schema[] | undefined) ?? [];
  if (allOf.some((part) => part.$ref === "#/components/schemas/PlantText")) parts.push(PLANT_TEXT_RULES);
  return parts.join("; ");
}

/** The field table, as the README shows it between its markers. */
export function fieldTable(document: Schema): string {
  const rows = propertiesOf(document, "NewPlant").map(
    (field) => `| \`${field.name}\` | ${String(field.schema.type)} | ${rules(field)} |`,
  );
  return ["| field | type | rules |", "|---|---|---|", ...rows].join("\n");
}

/** The README with its contract parts written from `document`. */
export function readmeFromContract(readme: string, document: Schema): string {
  const start = readme.indexOf(FIELDS_START);
  const end = readme.indexOf(FIELDS_END);
  if (start === -1 || end < start) throw new Error(`README.md must hold ${FIELDS_START} … ${FIELDS_END}`);
  const stored: PlantField[] = propertiesOf(document, "NewPlant")
    .filter(({ name }) => name !== "id")
    .map(({ name, required }) => ({ name: name as PlantField["name"], required }));
  return `${readme.slice(0, start + FIELDS_START.length)}\n${fieldTable(document)}\n${readme.slice(end)}`
    .replace(CONFLICT_EXAMPLE, `$1${describeFields(stored)}`)
    .replace(BODY_LIMIT, `$1${MAX_BODY_BYTES}$2`)
    .replace(LOCAL_URL, `$1${DEFAULT_PORT}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(README_PATH, readmeFromContract(readFileSync(README_PATH, "utf8"), readOpenApi()));
  console.log(`wrote ${README_PATH}: NewPlant's fields, the 409 example, the body limit, the port`);
}
