import { parse, splitNumber } from "lossless-json";
import { ApiError } from "../errors.ts";
import { validate } from "../generated/validate-new-plant.js";
import type { NewPlant } from "../plants/plant.ts";
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
  requireIJsonStructure(text);
  let value: unknown;
  try {
    value = parse(text, requireWellFormed, exactInteger);
  } catch (error) {
    if (error instanceof SyntaxError)
      throw new ApiError("BadRequest", `the body is not valid JSON: ${error.message}`);
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

/**
 * An integer value in any notation (`12`, `1.2e1`, `12.0`) as an exact bigint, where `JSON.parse` rounds
 * past 2^53. Any other number is its nearest double, or NaN when that is an integer (`1e-400`,
 * `1.0000000000000000001`), so that no integer check accepts a rounded value. More than 20 digits is far
 * outside int64: a double, which no int64 check accepts either, rather than a bigint of any length.
 */
function exactInteger(text: string): number | bigint {
  const { sign, digits, exponent } = splitNumber(text);
  if (exponent >= digits.length - 1 && exponent < 20) return BigInt(sign + digits.padEnd(exponent + 1, "0"));
  const value = Number(text);
  return Number.isInteger(value) && exponent < digits.length - 1 ? Number.NaN : value;
}

/** I-JSON (RFC 7493 §2.1): no string or key holds an unpaired surrogate, which no UTF-8 can carry. */
function requireWellFormed(key: string, value: unknown): unknown {
  const field = !key.isWellFormed()
    ? "a property name"
    : typeof value === "string" && !value.isWellFormed()
      ? key || "the body"
      : undefined;
  if (field)
    throw new ApiError("BadRequest", `${field} holds an unpaired surrogate (not well-formed Unicode)`);
  return value;
}

/** A string (a key when a colon follows; its closing quote optional, so that no match is retried) or a bracket. */
const STRUCTURE = /("(?:[^"\\]|\\.)*"?)(\s*:)?|[[\]{}]/g;

/**
 * What the parser leaves to this API of I-JSON (RFC 7493 §2.3), in one pass over the text before it
 * runs: a key twice in one object (lossless-json refuses only a repeat with another value), and nesting
 * deeper than 32 levels (the parser recurses, and a 16 KiB body of brackets overflows its stack).
 */
function requireIJsonStructure(text: string): void {
  // Per open object its keys so far; undefined for an open array.
  const open: (Set<string> | undefined)[] = [];
  for (const [token, string, colon] of text.matchAll(STRUCTURE)) {
    if (string === undefined) {
      if (token === "{" || token === "[") open.push(token === "{" ? new Set() : undefined);
      else open.pop();
      if (open.length > MAX_NESTING_DEPTH) {
        throw new ApiError("BadRequest", `the body nests deeper than ${MAX_NESTING_DEPTH} levels`);
      }
    } else if (colon !== undefined) {
      const keys = open.at(-1);
      const key = decodedKey(string);
      if (keys?.has(key)) throw new ApiError("BadRequest", `duplicate property '${key}'`);
      keys?.add(key);
    }
  }
}

function decodedKey(string: string): string {
  try {
    return JSON.parse(string) as string;
  } catch {
    return string; // not JSON: the parser says so
  }
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
