import { isObject } from "../request/lossless-json.ts";

/** A public key as an issuer publishes it (RFC 7517 §4, RFC 7518 §6): the members this API reads. */
export interface JsonWebKey {
  kty: string;
  kid?: string;
  alg?: string;
  use?: string;
  key_ops?: unknown;
  crv?: string;
  n?: string;
  e?: string;
  x?: string;
  y?: string;
}

/** The issuer answered 200 with something that is not a key set (HTML, `{}`, cut short): its fault. */
export class KeySetInvalidError extends Error {
  override name = "KeySetInvalidError";
}

export const UNKNOWN_SIGNING_KEY = "the token is invalid: unknown signing key";

/** Members that, when present, must be strings for the key set to be taken (as aws-jwt-verify did). */
const STRING_MEMBERS = ["kty", "use", "alg", "kid", "n", "e", "x", "y", "crv"] as const;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The most keys a key set may hold for its keys to be imported and kept: issuers publish a few (Cognito
 * two, Entra ID about ten), so a longer list is not a key set this API can trust with its memory.
 */
export const MAX_KEYS_IN_KEY_SET = 100;

/**
 * A key-set document (RFC 7517 §5): a JSON object whose `keys` is a list of objects, each with a
 * string `kty`. One malformed key refuses the whole document: it is not what the issuer meant to serve.
 */
export function parseKeySet(body: Uint8Array): JsonWebKey[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8.decode(body));
  } catch (error) {
    throw new KeySetInvalidError(
      `the key set is not JSON: ${error instanceof Error ? error.message : error}`,
    );
  }
  const keys = isObject(parsed) ? parsed.keys : undefined;
  if (!Array.isArray(keys)) throw new KeySetInvalidError("the key set has no list of keys");
  if (keys.length > MAX_KEYS_IN_KEY_SET) {
    throw new KeySetInvalidError(
      `the key set holds ${keys.length} keys; at most ${MAX_KEYS_IN_KEY_SET} are taken`,
    );
  }
  for (const key of keys) {
    if (!isObject(key) || typeof key.kty !== "string") {
      throw new KeySetInvalidError("a key of the key set is not a key (no kty)");
    }
    for (const member of STRING_MEMBERS) {
      if (member in key && typeof key[member] !== "string") {
        throw new KeySetInvalidError(`a key of the key set has a ${member} that is not a string`);
      }
    }
  }
  return keys as JsonWebKey[];
}
