import { patternRefusals } from "../generated/pattern-refusals.js";
import type { SchemaError } from "../generated/validate-new-plant.js";

/** What a body the NewPlant schema refuses is told: loaded with the first one (parse-new-plant.ts), a chunk. */
const INT64_RANGE = "between -9223372036854775808 and 9223372036854775807";

/** More problems than this are counted, not listed: a body of 1,700 unknown keys answers in a line. */
const MAX_LISTED_PROBLEMS = 10;

export function describeSchemaErrors(errors: SchemaError[]): string {
  const listed = errors.slice(0, MAX_LISTED_PROBLEMS).map(describeSchemaError).join("; ");
  const more = errors.length - MAX_LISTED_PROBLEMS;
  return more > 0 ? `${listed}; and ${more} more` : listed;
}

function describeSchemaError({ instancePath, keyword, params }: SchemaError): string {
  const field = instancePath.slice(1);
  switch (keyword) {
    case "required":
      return `${params.missingProperty} is required`;
    case "additionalProperties":
      return `unknown property '${params.additionalProperty}'`;
    case "x-exact-integer":
      return `${field} must be an integer ${INT64_RANGE}`;
    case "type":
      return field === "" ? "the body must be a JSON object" : `${field} must be a ${params.type}`;
    case "minLength":
      return params.limit === 1
        ? `${field} must not be empty`
        : `${field} must have at least ${params.limit} characters`;
    case "maxLength":
      return `${field} must have at most ${params.limit} characters`;
    case "pattern":
      return `${field} ${patternRefusals[params.pattern ?? ""] ?? "is invalid (pattern)"}`;
    default:
      return `${field || "the body"} is invalid (${keyword})`;
  }
}
