import { ApiError } from "../errors.ts";
import { validate } from "../generated/validate-new-plant.js";
import type { NewPlant } from "../plants/plant.ts";
import { JsonSyntaxError, parseJson } from "./lossless-json.ts";
import { type RequestBody, readBodyText } from "./request-body.ts";

const MAX_NESTING_DEPTH = 32;

/**
 * Turns a request's Content-Type and body into a NewPlant, or throws the 4xx that says why not. What a
 * schema refusal says is written by schema-refusals.ts, loaded with the first body the schema refuses.
 */
export async function parseNewPlant(
  contentType: string | undefined,
  body: RequestBody | undefined,
): Promise<NewPlant> {
  requireJsonMediaType(contentType);
  const text = readBodyText(body);
  let value: unknown;
  try {
    value = parseJson(text, MAX_NESTING_DEPTH);
  } catch (error) {
    if (error instanceof JsonSyntaxError) {
      throw new ApiError("BadRequest", `the body is not valid JSON: ${error.message}`);
    }
    throw error;
  }
  if (!validate(value)) {
    // Read before awaiting: the validator keeps the errors of its last call, another request's by then.
    const errors = validate.errors ?? [];
    const { describeSchemaErrors } = await import("./schema-refusals.ts");
    throw new ApiError("BadRequest", describeSchemaErrors(errors));
  }
  return { ...value, id: BigInt(value.id) };
}

function requireJsonMediaType(contentType: string | undefined): void {
  if (contentType === "application/json") return;
  const [mediaType = "", ...parameters] = (contentType ?? "").split(";").map((part) => part.trim());
  const charset = parameters
    .map((parameter) => /^charset\s*=\s*"?([^"]*)"?$/i.exec(parameter)?.[1])
    .find((value) => value !== undefined);
  if (mediaType.toLowerCase() !== "application/json") {
    throw new ApiError("UnsupportedMediaType", "the Content-Type header must be application/json");
  }
  if (charset !== undefined && charset.toLowerCase() !== "utf-8") {
    throw new ApiError("UnsupportedMediaType", "the Content-Type charset must be utf-8");
  }
}
