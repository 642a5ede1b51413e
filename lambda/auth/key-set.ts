import type { KeyObject } from "node:crypto";
import { ApiError } from "../errors.ts";
import { isObject } from "../is-object.ts";
import { logWarning } from "../log.ts";
import { algorithmNotAllowed, type JwsAlgorithm } from "./jws.ts";
import { keyWeakness, type PublicKeyMembers } from "./key-strength.ts";

type NodeCrypto = typeof import("node:crypto");

/** A public key as an issuer publishes it (RFC 7517 §4, RFC 7518 §6): the members this API reads. */
export interface JsonWebKey extends PublicKeyMembers {
  kid?: string;
  alg?: string;
  use?: string;
  key_ops?: string[];
}

/** A key of the issuer's key set, imported when the key set arrived. */
export interface SigningKey {
  jwk: JsonWebKey;
  /** Its `kty` (and `crv`), read once when the key set arrived: what an alg must fit. */
  type: string;
  key: KeyObject;
  /** An RSA key's modulus in bytes, its signatures' length: read once (node:crypto reads it anew per call). */
  modulusBytes: number | undefined;
}

/** A key of the key set that is never trusted, and why: said to a token naming it, and logged once. */
export interface LeftOutKey {
  /** Its `kty` (and `crv`) when it could be read: a token of another alg is not about this key. */
  type: string | undefined;
  reason: string;
}

/**
 * The issuer failed, never the caller: its key set could not be downloaded (no answer, not a 200:
 * KeySetFetchError), or the document is not a key set (HTML, `{}`, cut short, too many keys:
 * KeySetInvalidError). Its name says which: in the log line, and by the 503's message.
 */
export interface KeySetError extends Error {
  name: "KeySetFetchError" | "KeySetInvalidError";
  /** False but for a download that got no answer: asking again at once would get the same. */
  retryable: boolean;
}

export function keySetError(name: KeySetError["name"], message: string, retryable = false): KeySetError {
  return Object.assign(new Error(message), { name, retryable });
}

export function isKeySetError(error: unknown): error is KeySetError {
  return error instanceof Error && (error.name === "KeySetFetchError" || error.name === "KeySetInvalidError");
}

export const UNKNOWN_SIGNING_KEY = "the token is invalid: unknown signing key";

/**
 * The most keys a key set may hold for its keys to be imported and kept: issuers publish a few (Cognito
 * two, Entra ID about ten), so a longer list is not a key set this API can trust with its memory.
 */
export const MAX_KEYS_IN_KEY_SET = 100;

/** Keeps a log line short whatever the issuer named its key; a kid is no secret. */
const MAX_LOGGED_KID_LENGTH = 100;

/** Members that, when present, must be strings for the key to be taken. */
const STRING_MEMBERS = ["kty", "use", "alg", "kid", "n", "e", "x", "y", "crv"] as const;

/**
 * RFC 7518 §6.2.2, §6.3.2, §6.4: the members of a private or symmetric key. A key set publishing one has
 * given its signing secret away: anyone who read it can sign tokens with that key, so it is never used.
 */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] as const;

/** What a kid names in the key set: RFC 7517 §4.5 lets keys of different types share one. */
interface KeysOfKid {
  usable: SigningKey[];
  leftOut: LeftOutKey[];
  /** Keys published for another use (`use: enc`), as unknown to a token as a kid never published. */
  notForSignatures: JsonWebKey[];
}

const NOTHING: KeysOfKid = { usable: [], leftOut: [], notForSignatures: [] };

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The issuer's key set as parseKeySet took it. */
export interface KeySet {
  /** Whether the key set publishes anything under `kid`: if not, only a fresh key set could. */
  has(kid: string): boolean;
  /** The key that verifies a token naming `kid` and `algorithm`, or the 401 saying why there is none. */
  keyFor(kid: string, algorithm: JwsAlgorithm): SigningKey;
}

/**
 * The issuer's key set (RFC 7517 §5) in `document` (the body of the issuer's answer, or the one delivered
 * at deploy time), taken key by key: a JSON object whose `keys` is a list of at most MAX_KEYS_IN_KEY_SET
 * entries, else a KeySetInvalidError. A key malformed, unusable, private or weak (key-strength.ts) is left
 * out and the others serve; the checks of Ed25519 and Ed448 keys are loaded only for a set that holds one.
 * A token's key is the one of its kid whose type and curve fit its alg; two such keys are ambiguous and
 * refuse the token. Every refusal here is a 401: a left-out key is never trusted and a token naming it
 * cannot become valid by retrying; the operator learns of it from the line logged here, on stderr (stdout is
 * one JSON line per request): its kid and why, never its key material.
 */
export async function parseKeySet(document: Uint8Array | string, nodeCrypto: NodeCrypto): Promise<KeySet> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof document === "string" ? document : utf8.decode(document));
  } catch (error) {
    throw keySetError(
      "KeySetInvalidError",
      `the key set is not JSON: ${error instanceof Error ? error.message : error}`,
    );
  }
  const keys = isObject(parsed) ? parsed.keys : undefined;
  if (!Array.isArray(keys)) throw keySetError("KeySetInvalidError", "the key set has no list of keys");
  if (keys.length > MAX_KEYS_IN_KEY_SET) {
    throw keySetError(
      "KeySetInvalidError",
      `the key set holds ${keys.length} keys; at most ${MAX_KEYS_IN_KEY_SET} are taken`,
    );
  }
  const holdsOkp = keys.some((entry) => isObject(entry) && entry.kty === "OKP");
  const okpWeakness = holdsOkp ? (await import("./okp-key-strength.ts")).okpWeakness : undefined;

  const byKid = new Map<string, KeysOfKid>();
  const keysOf = (kid: string): KeysOfKid => {
    let ofKid = byKid.get(kid);
    if (ofKid === undefined) {
      ofKid = { usable: [], leftOut: [], notForSignatures: [] };
      byKid.set(kid, ofKid);
    }
    return ofKid;
  };
  const leaveOut = (kid: string | undefined, type: string | undefined, reason: string) => {
    if (kid !== undefined) keysOf(kid).leftOut.push({ type, reason });
    const shownKid =
      kid === undefined || kid.length <= MAX_LOGGED_KID_LENGTH
        ? kid
        : `${kid.slice(0, MAX_LOGGED_KID_LENGTH)}...`;
    logWarning("a key of the issuer's key set is left out", { kid: shownKid ?? null, reason });
  };
  for (const entry of keys) {
    // A numeric kid (not a string: unusable) is kept as text, so that a token naming it is told why.
    const kid = publishedKid(entry);
    const read = readPublishedKey(entry);
    if (kid === undefined || "unusable" in read) {
      const reason =
        "unusable" in read ? read.unusable : "it has no kid: this API takes only tokens naming their key";
      leaveOut(kid, undefined, reason);
      continue;
    }
    const { jwk } = read;
    if (jwk.use !== undefined && jwk.use !== "sig") {
      keysOf(kid).notForSignatures.push(jwk);
      continue;
    }
    const weakness = keyWeakness(jwk, okpWeakness);
    const imported = weakness === undefined ? importVerificationKey(nodeCrypto, jwk) : { unusable: weakness };
    // A kty this API does not verify has no type an alg could fit: any token naming it is told why.
    const type = ["RSA", "EC", "OKP"].includes(jwk.kty) ? keyType(jwk) : undefined;
    if ("unusable" in imported) leaveOut(kid, type, imported.unusable);
    else {
      const bits = imported.key.asymmetricKeyDetails?.modulusLength;
      const modulusBytes = bits === undefined ? undefined : Math.ceil(bits / 8);
      keysOf(kid).usable.push({ jwk, type: keyType(jwk), key: imported.key, modulusBytes });
    }
  }

  return {
    has: (kid) => byKid.has(kid),
    keyFor(kid, algorithm) {
      const { usable, leftOut, notForSignatures } = byKid.get(kid) ?? NOTHING;
      const fits = (type: string | undefined) => type === undefined || algorithm.keys.has(type);
      const [candidate, ...others] = usable.filter((key) => fits(key.type));
      if (candidate !== undefined && others.length > 0) {
        throw new ApiError(
          "InvalidToken",
          "the token is invalid: the issuer publishes more than one key of its alg's type under its kid",
        );
      }
      if (candidate !== undefined) {
        // A key set may publish keys without `alg` (Entra ID's do), leaving the header to choose; a key
        // with one verifies only tokens of that alg.
        const { alg } = candidate.jwk;
        if (alg !== undefined && alg !== algorithm.name) throw algorithmNotAllowed();
        return candidate;
      }
      const unusable = leftOut.find((key) => fits(key.type));
      if (unusable !== undefined) {
        throw new ApiError(
          "InvalidToken",
          `the token is invalid: the issuer's key it names cannot be used: ${unusable.reason}`,
        );
      }
      if (notForSignatures.some((jwk) => fits(keyType(jwk))))
        throw new ApiError("InvalidToken", UNKNOWN_SIGNING_KEY);
      throw algorithmNotAllowed();
    },
  };
}

function keyType(jwk: JsonWebKey): string {
  return jwk.kty === "RSA" ? "RSA" : `${jwk.kty} ${jwk.crv}`;
}

/**
 * The name a token could give an entry of the key set: its kid, or a numeric kid as the string a
 * header would carry; undefined when the entry has no kid a token could name.
 */
function publishedKid(entry: unknown): string | undefined {
  if (!isObject(entry)) return undefined;
  const { kid } = entry;
  return typeof kid === "string" ? kid : typeof kid === "number" ? String(kid) : undefined;
}

/**
 * An entry of the key set as a JsonWebKey, or why it is not one to verify with: not an object, no `kty`,
 * a member that is not a string (`"alg": null`, a numeric `n`), a private member, and RFC 7517 §4.3's
 * metadata: `ext` that is not a boolean, `key_ops` that is not a list of distinct names, or names an
 * operation other than `verify` (a public key does nothing else).
 */
function readPublishedKey(entry: unknown): { jwk: JsonWebKey } | { unusable: string } {
  if (!isObject(entry)) return { unusable: "it is not a JSON object" };
  if (!("kty" in entry)) return { unusable: "it has no kty" };
  for (const member of STRING_MEMBERS) {
    if (member in entry && typeof entry[member] !== "string") {
      return { unusable: `its ${member} is not a string` };
    }
  }
  const privateMember = PRIVATE_MEMBERS.find((member) => member in entry);
  if (privateMember !== undefined) {
    return { unusable: `it publishes a private key member (${privateMember}): never used to verify` };
  }
  if ("ext" in entry && typeof entry.ext !== "boolean") return { unusable: "its ext is not a boolean" };
  const { key_ops } = entry;
  if (key_ops !== undefined) {
    const names =
      Array.isArray(key_ops) && key_ops.every((op) => typeof op === "string") ? key_ops : undefined;
    if (names === undefined) return { unusable: "its key_ops is not a list of names" };
    if (new Set(names).size !== names.length) return { unusable: "its key_ops lists an operation twice" };
    if (!names.includes("verify")) return { unusable: "its key_ops do not include verify" };
    if (names.length > 1) return { unusable: "its key_ops name operations besides verify" };
  }
  return { jwk: entry as unknown as JsonWebKey };
}

/**
 * A published key imported into node:crypto, or why it cannot be: only the members that define the key
 * reach it. Its import refuses an EC point that is not on the key's curve (a P-384 point under
 * `crv: P-256` is one); the checks of key-strength.ts come first, so whatever else it refuses is said
 * as such.
 */
function importVerificationKey(
  { createPublicKey }: NodeCrypto,
  jwk: JsonWebKey,
): { key: KeyObject } | { unusable: string } {
  const { kty, crv, n, e, x, y } = jwk;
  try {
    return { key: createPublicKey({ key: { kty, crv, n, e, x, y }, format: "jwk" }) };
  } catch {
    return { unusable: kty === "EC" ? `its point is not on ${crv}` : "node:crypto cannot import it" };
  }
}
