import type { KeyObject } from "node:crypto";
import { isObject } from "../is-object.ts";
import { logWarning } from "../log.ts";
import { algorithmNotAllowed, invalidToken, type JwsAlgorithm, UNKNOWN_SIGNING_KEY } from "./jws.ts";
import { keyWeakness, type PublicKeyMembers } from "./key-strength.ts";

type NodeCrypto = typeof import("node:crypto");

/** A public key as an issuer publishes it (RFC 7517 §4, RFC 7518 §6.3.1): the members this API reads. */
export interface JsonWebKey extends PublicKeyMembers {
  kid?: string;
  alg?: string;
  use?: string;
  key_ops?: string[];
}

/** An RSA key of the issuer's key set, imported when the key set arrived. */
export interface SigningKey {
  jwk: JsonWebKey;
  key: KeyObject;
  /** Its modulus in bytes, its signatures' length: read once (node:crypto reads it anew per call). */
  modulusBytes: number;
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

/**
 * What a kid names in the key set: RFC 7517 §4.5 lets keys of different types share one, so an issuer
 * may publish an RSA key beside an EC or OKP one under one kid. A token is told, in this order: why its
 * kid's RSA keys (or entries whose kty could not be read) were left out; that its kid names no signing
 * key, when a key was published for another use; why a key of another kty was left out.
 */
interface KeysOfKid {
  usable: SigningKey[];
  leftOut: string[];
  /** A key published for another use (`use: enc`), as unknown to a token as a kid never published. */
  forOtherUse: boolean;
  /** Why a key of another kty (EC, OKP, ...) was left out: RS256, RS384 and RS512 fit none. */
  anotherKty?: string;
}

const NOTHING: KeysOfKid = { usable: [], leftOut: [], forOtherUse: false };

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The issuer's key set as parseKeySet took it. */
export interface KeySet {
  /** Whether the key set publishes anything under `kid`: if not, only a fresh key set could. */
  has(kid: string): boolean;
  /** The RSA key that verifies a token naming `kid` and `algorithm`, or the 401 saying why there is none. */
  keyFor(kid: string, algorithm: JwsAlgorithm): SigningKey;
}

/**
 * The issuer's key set (RFC 7517 §5) in `document` (the body of the issuer's answer, or the one delivered
 * at deploy time), taken key by key: a JSON object whose `keys` is a list of at most MAX_KEYS_IN_KEY_SET
 * entries, else a KeySetInvalidError. A key malformed, unusable, private, weak or not RSA (key-strength.ts)
 * is left out and the others serve. A token's key is the RSA key of its kid; two such keys are ambiguous
 * and refuse the token. Every refusal here is a 401: a left-out key is never trusted and a token naming it
 * cannot become valid by retrying; the operator learns of it from the line logged here, on stderr (stdout is
 * one JSON line per request): its kid and why, never its key material.
 */
export function parseKeySet(document: Uint8Array | string, nodeCrypto: NodeCrypto): KeySet {
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

  const byKid = new Map<string, KeysOfKid>();
  const keysOf = (kid: string): KeysOfKid => {
    let ofKid = byKid.get(kid);
    if (ofKid === undefined) {
      ofKid = { usable: [], leftOut: [], forOtherUse: false };
      byKid.set(kid, ofKid);
    }
    return ofKid;
  };
  const leaveOut = (kid: string | undefined, reason: string, ofAnotherKty = false) => {
    if (kid !== undefined && ofAnotherKty) keysOf(kid).anotherKty = reason;
    else if (kid !== undefined) keysOf(kid).leftOut.push(reason);
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
      leaveOut(kid, reason);
      continue;
    }
    const { jwk } = read;
    if (jwk.use !== undefined && jwk.use !== "sig") {
      keysOf(kid).forOtherUse = true;
      continue;
    }
    const weakness = keyWeakness(jwk);
    const imported = weakness === undefined ? importVerificationKey(nodeCrypto, jwk) : { unusable: weakness };
    if ("unusable" in imported) leaveOut(kid, imported.unusable, jwk.kty !== "RSA");
    else {
      const bits = imported.key.asymmetricKeyDetails?.modulusLength ?? 0;
      keysOf(kid).usable.push({ jwk, key: imported.key, modulusBytes: Math.ceil(bits / 8) });
    }
  }

  return {
    has: (kid) => byKid.has(kid),
    keyFor(kid, algorithm) {
      const { usable, leftOut, forOtherUse, anotherKty } = byKid.get(kid) ?? NOTHING;
      const [candidate, ...others] = usable;
      if (candidate === undefined) {
        const reason = leftOut[0] ?? (forOtherUse ? undefined : anotherKty);
        throw invalidToken(
          reason === undefined ? UNKNOWN_SIGNING_KEY : `the issuer's key it names cannot be used: ${reason}`,
        );
      }
      if (others.length > 0) {
        throw invalidToken("the issuer publishes more than one key of its alg's type under its kid");
      }
      // A key set may publish keys without `alg` (Entra ID's do), leaving the header to choose; a key
      // with one verifies only tokens of that alg.
      const { alg } = candidate.jwk;
      if (alg !== undefined && alg !== algorithm.name) throw algorithmNotAllowed();
      return candidate;
    },
  };
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
 * metadata: `ext` that is not a boolean, `key_ops` other than `["verify"]`.
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
  // A public key's one operation is verify: any other list, or one naming it twice, is not this key's.
  const { key_ops } = entry;
  if (key_ops !== undefined && !(Array.isArray(key_ops) && key_ops.length === 1 && key_ops[0] === "verify")) {
    return { unusable: "its key_ops is not verify alone" };
  }
  return { jwk: entry as unknown as JsonWebKey };
}

/**
 * A published RSA key imported into node:crypto, or why it cannot be: only the members that define the
 * key reach it. The checks of key-strength.ts come first, so whatever else it refuses is said as such.
 */
function importVerificationKey(
  { createPublicKey }: NodeCrypto,
  { kty, n, e }: JsonWebKey,
): { key: KeyObject } | { unusable: string } {
  try {
    return { key: createPublicKey({ key: { kty, n, e }, format: "jwk" }) };
  } catch {
    return { unusable: "node:crypto cannot import it" };
  }
}
