import { isObject } from "../request/lossless-json.ts";

/** A public key as an issuer publishes it (RFC 7517 §4, RFC 7518 §6): the members this API reads. */
export interface JsonWebKey {
  kty: string;
  kid?: string;
  alg?: string;
  use?: string;
  key_ops?: string[];
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

/** Members that, when present, must be strings for the key to be taken. */
const STRING_MEMBERS = ["kty", "use", "alg", "kid", "n", "e", "x", "y", "crv"] as const;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The most keys a key set may hold for its keys to be imported and kept: issuers publish a few (Cognito
 * two, Entra ID about ten), so a longer list is not a key set this API can trust with its memory.
 */
export const MAX_KEYS_IN_KEY_SET = 100;

/**
 * A key-set document (RFC 7517 §5): a JSON object whose `keys` is a list of at most MAX_KEYS_IN_KEY_SET
 * entries, each still unchecked (readPublishedKey): one bad key does not refuse the others.
 */
export function parseKeySet(body: Uint8Array): unknown[] {
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
  return keys;
}

/**
 * The name a token could give an entry of the key set: its kid, or a numeric kid as the string a
 * header would carry; undefined when the entry has no kid a token could name.
 */
export function publishedKid(entry: unknown): string | undefined {
  if (!isObject(entry)) return undefined;
  const { kid } = entry;
  return typeof kid === "string" ? kid : typeof kid === "number" ? String(kid) : undefined;
}

/**
 * An entry of the key set as a JsonWebKey, or why it is not one: not an object, no `kty`, a member
 * that is not a string (`"alg": null`, a numeric `n`), `key_ops` that is not a list of names.
 */
export function readPublishedKey(entry: unknown): { jwk: JsonWebKey } | { unusable: string } {
  if (!isObject(entry)) return { unusable: "it is not a JSON object" };
  if (!("kty" in entry)) return { unusable: "it has no kty" };
  for (const member of STRING_MEMBERS) {
    if (member in entry && typeof entry[member] !== "string") {
      return { unusable: `its ${member} is not a string` };
    }
  }
  const { key_ops } = entry;
  if (key_ops !== undefined && !(Array.isArray(key_ops) && key_ops.every((op) => typeof op === "string"))) {
    return { unusable: "its key_ops is not a list of names" };
  }
  return { jwk: entry as unknown as JsonWebKey };
}
