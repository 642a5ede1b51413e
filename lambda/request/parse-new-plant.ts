import { BadRequestError, UnsupportedMediaTypeError } from "../errors.ts";
import { patternRefusals, type SchemaError, validate } from "../generated/validate-new-plant.js";
import type { NewPlant } from "../plants/plant.ts";
import { JsonSyntaxError, parseJson } from "./lossless-json.ts";
import { type RequestBody, readBodyText } from "./request-body.ts";

const MAX_NESTING_DEPTH = 32;
const INT64_RANGE = "between -9223372036854775808 and 9223372036854775807";

/** Turns a request's Content-Type and body into a NewPlant, or throws the 4xx that says why not. */
export function parseNewPlant(contentType: string | undefined, body: RequestBody | undefined): NewPlant {
  requireJsonMediaType(contentType);
  const text = readBodyText(body);
  let value: unknown;
  try {
    value = parseJson(text, MAX_NESTING_DEPTH);
  } catch (error) {
    if (error instanceof JsonSyntaxError) {
      throw new BadRequestError(`the body is not valid JSON: ${error.reason} at position ${error.position}`);
    }
    throw error;
  }
  if (!validate(value)) throw new BadRequestError(describeSchemaErrors(validate.errors ?? []));
  return { ...value, id: BigInt(value.id) };
}

function requireJsonMediaType(contentType: string | undefined): void {
  const [mediaType = "", ...parameters] = (contentType ?? "").split(";").map((part) => part.trim());
  const charset = parameters
    .map((parameter) => /^charset\s*=\s*"?([^"]*)"?$/i.exec(parameter)?.[1])
    .find((value) => value !== undefined);
  if (mediaType.toLowerCase() !== "application/json") {
    throw new UnsupportedMediaTypeError("the Content-Type header must be application/json");
  }
  if (charset !== undefined && charset.toLowerCase() !== "utf-8") {
    throw new UnsupportedMediaTypeError("the Content-Type charset must be utf-8");
  }
}

/** More problems than this are counted, not listed: a body of 1,700 unknown keys answers in a line. */
const MAX_LISTED_PROBLEMS = 10;

function describeSchemaErrors(errors: SchemaError[]): string {
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
