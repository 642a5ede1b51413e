/**
 * X-Ray's segment document schema, as AWS publishes it: "xray-segmentdocument-schema-v1.0.0", the
 * download offered on the X-Ray developer guide's page on segment documents.
 * fixtures/xray-segmentdocument-schema-v1.0.0.json is that text byte for byte, as two public
 * repositories carry it, identical: cookpad/aws-xray (spec/schema/, commit 6f7d0ae, 2017) and
 * pokryfka/aws-xray-sdk-swift (PerformanceTests/AWSXRayJSONTests/, commit a24ea39, 2020). Its SHA-256 is
 * checked as it is loaded, so that an edit to it cannot pass unseen (biome leaves the fixtures alone).
 *
 * The schema is JSON Schema draft-04, and open: it names fields but lets any other through, so a
 * misspelt field would pass it. A document sent on its own is therefore checked twice:
 * - against the schema as published: its top level (a document has a name, an id, a start time and a
 *   trace id) and its subsegment definition;
 * - against a closed copy of the subsegment definition, where an object holds only the fields the schema
 *   names, plus what the developer guide documents for a subsegment sent on its own (`type`
 *   "subsegment", `trace_id` and `parent_id` required; `namespace` "aws" or "remote") and `aws.retries`,
 *   which the X-Ray SDKs record for AWS calls (aws-xray-sdk-node's Aws attributes).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import ajvDraft04, { type ValidateFunction } from "ajv-draft-04";

const SCHEMA_FILE = new URL("./fixtures/xray-segmentdocument-schema-v1.0.0.json", import.meta.url);
const SCHEMA_SHA256 = "fadee7757051970168366a1b6cdf8ed8789e1ceaec869b68b53b3a29cd1a31ad";

interface ObjectSchema {
  properties: Record<string, unknown>;
  required?: string[];
  [keyword: string]: unknown;
}

interface PublishedSchema extends ObjectSchema {
  $schema: string;
  definitions: Record<string, unknown>;
}

function loadSchema(): PublishedSchema {
  const text = readFileSync(SCHEMA_FILE);
  const digest = createHash("sha256").update(text).digest("hex");
  if (digest !== SCHEMA_SHA256) throw new Error(`${SCHEMA_FILE.pathname} is not the published schema`);
  return JSON.parse(text.toString("utf8")) as PublishedSchema;
}

/** Every object schema that names its properties allows no other. */
function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (typeof node !== "object" || node === null) return node;
  const copy = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, closed(value)]));
  if ("properties" in copy && !("additionalProperties" in copy)) copy.additionalProperties = false;
  return copy;
}

/** The subsegment definition, closed, with what a document sent on its own must and may hold. */
function independentSubsegment(schema: PublishedSchema): object {
  const definitions = closed(schema.definitions) as Record<string, ObjectSchema | undefined>;
  const subsegment = structuredClone(definitions.subsegment);
  if (subsegment === undefined) throw new Error("the schema has no subsegment definition");
  const { id, trace_id, parent_id } = schema.properties;
  // The definition requires an id but does not describe it; the top level's is the same 16 characters.
  Object.assign(subsegment.properties, {
    id,
    trace_id,
    parent_id,
    type: { enum: ["subsegment"] },
    namespace: { enum: ["aws", "remote"] },
  });
  (subsegment.properties.aws as ObjectSchema).properties.retries = { type: "integer", minimum: 0 };
  subsegment.required = [...(subsegment.required ?? []), "type", "trace_id", "parent_id"];
  return { $schema: schema.$schema, definitions, ...subsegment };
}

/** The schema's complaints about one document sent on its own; empty when it passes. */
export type SegmentSchemaCheck = (document: unknown) => string[];

export function segmentSchemaCheck(): SegmentSchemaCheck {
  const schema = loadSchema();
  // strict: false, as the published text has keywords of its own (`version`, `java_pattern`).
  // The package is CommonJS: its class is the module and, for TypeScript, its `default`.
  const ajv = new ajvDraft04.default({ strict: false, allErrors: true });
  ajv.addSchema(schema, "published");
  const validators: [string, ValidateFunction][] = [
    ["the published schema", ajv.compile({ $ref: "published#" })],
    ["its subsegment definition", ajv.compile({ $ref: "published#/definitions/subsegment" })],
    ["the closed subsegment", ajv.compile(independentSubsegment(schema))],
  ];
  return (document) =>
    validators.flatMap(([name, validate]) =>
      validate(document) ? [] : [`${name}: ${ajv.errorsText(validate.errors, { separator: "; " })}`],
    );
}
