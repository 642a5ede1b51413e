import { createPublicKey, type JsonWebKey } from "node:crypto";
import { isJwk, type Jwk, type Jwks } from "aws-jwt-verify/jwk";
import { isObject } from "../is-object.ts";
import { logWarning } from "../log.ts";

/** The issuer's key set as this API takes it: the keys to verify with, and why each other kid was left out. */
export interface UsableKeySet {
  jwks: Jwks;
  leftOut: Map<string, string>;
}

/**
 * The most keys a key set may hold for its keys to be kept: issuers publish a few (Cognito two, Entra ID
 * about ten), so a longer list is not a key set this API can trust with its memory.
 */
export const MAX_KEYS_IN_KEY_SET = 100;
/** RFC 7518 §3.3: "A key of size 2048 bits or larger MUST be used with these algorithms." */
export const MIN_RSA_MODULUS_BITS = 2048;
/** A forged token costs a verification, which grows with the square of the modulus; issuers use 2048 to 4096. */
export const MAX_RSA_MODULUS_BITS = 8192;
/** Issuers use 65537: an exponent of thousands of bits makes every forged token dear; 32 bits hold any real one. */
export const MAX_RSA_PUBLIC_EXPONENT_BITS = 32;
/**
 * RFC 7518 §6.2.2, §6.3.2, §6.4: the members of a private or symmetric key. A key set publishing one has
 * given its signing secret away: anyone who read it can sign tokens with that key, so it is never used.
 */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];
/** Keeps a log line short whatever the issuer named its key; a kid is no secret. */
const MAX_LOGGED_KID_LENGTH = 100;

/**
 * The key set in `document` (the issuer's answer, or the one delivered at deploy time): a JSON object
 * whose `keys` is a list of at most MAX_KEYS_IN_KEY_SET entries, else an Error named KeySetInvalidError (the
 * issuer's fault: a 503). aws-jwt-verify refuses a whole set for one malformed key and takes weak or private
 * ones; here each key it could not use, or must not, is left out with one line on stderr (its kid and why,
 * never its material), and the others serve. A token naming a left-out kid is told why (401).
 */
export function usableKeySet(document: string | ArrayBuffer): UsableKeySet {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof document === "string" ? document : new TextDecoder().decode(document));
  } catch (error) {
    throw keySetInvalid(`the key set is not JSON: ${error instanceof Error ? error.message : error}`);
  }
  const entries = isObject(parsed) ? parsed.keys : undefined;
  if (!Array.isArray(entries)) throw keySetInvalid("the key set has no list of keys");
  if (entries.length > MAX_KEYS_IN_KEY_SET) {
    throw keySetInvalid(`the key set holds ${entries.length} keys; at most ${MAX_KEYS_IN_KEY_SET} are taken`);
  }

  const leftOut = new Map<string, string>();
  const usable = new Map<string, Jwk>();
  const leaveOut = (kid: string | undefined, reason: string) => {
    if (kid !== undefined && !leftOut.has(kid)) leftOut.set(kid, reason);
    const shownKid =
      kid && kid.length > MAX_LOGGED_KID_LENGTH ? `${kid.slice(0, MAX_LOGGED_KID_LENGTH)}...` : kid;
    logWarning("a key of the issuer's key set is left out", { kid: shownKid ?? null, reason });
  };
  for (const entry of entries) {
    const kid = isObject(entry) && typeof entry.kid === "string" ? entry.kid : undefined;
    const unusable = whyUnusable(entry);
    if (kid === undefined)
      leaveOut(undefined, unusable ?? "it has no kid: this API takes only tokens naming their key");
    else if (unusable !== undefined) leaveOut(kid, unusable);
    else if (usable.has(kid) || leftOut.has(kid)) {
      // Which of two keys a token means is not for this API to guess.
      usable.delete(kid);
      leaveOut(kid, "the issuer publishes more than one key under its kid");
    } else usable.set(kid, entry as Jwk);
  }
  return { jwks: { keys: [...usable.values()] } as Jwks, leftOut };
}

/** Why a published key is never to verify a token; undefined for a key to use. */
function whyUnusable(published: unknown): string | undefined {
  if (!isJwk(published as Parameters<typeof isJwk>[0])) {
    return "it is not a JSON Web Key (RFC 7517): a member is missing or not a string";
  }
  const entry = published as Jwk;
  const privateMember = PRIVATE_MEMBERS.find((member) => member in entry);
  if (privateMember !== undefined)
    return `it publishes a private key member (${privateMember}): never used to verify`;
  if (entry.use !== undefined && entry.use !== "sig") return `it is published for another use (${entry.use})`;
  // RFC 7517 §4.3: a public key's one operation is verify; aws-jwt-verify reads neither member.
  const { key_ops, ext } = entry as { key_ops?: unknown; ext?: unknown };
  if (key_ops !== undefined && !(Array.isArray(key_ops) && key_ops.length === 1 && key_ops[0] === "verify")) {
    return "its key_ops is not verify alone";
  }
  if (ext !== undefined && typeof ext !== "boolean") return "its ext is not a boolean";
  if (!["RSA", "EC", "OKP"].includes(entry.kty))
    return `its kty ${entry.kty} signs none of RS*, ES* and EdDSA`;
  let details: ReturnType<typeof createPublicKey>["asymmetricKeyDetails"];
  try {
    details = createPublicKey({ key: entry as JsonWebKey, format: "jwk" }).asymmetricKeyDetails;
  } catch {
    return "node:crypto cannot import it";
  }
  if (entry.kty !== "RSA") return undefined;
  const bits = details?.modulusLength ?? 0;
  const exponent = details?.publicExponent ?? 0n;
  if (bits < MIN_RSA_MODULUS_BITS) {
    return `its RSA modulus has ${bits} bits; at least ${MIN_RSA_MODULUS_BITS} are required (RFC 7518 section 3.3)`;
  }
  if (bits > MAX_RSA_MODULUS_BITS)
    return `its RSA modulus has ${bits} bits; at most ${MAX_RSA_MODULUS_BITS} are taken`;
  if (((Buffer.from(entry.n ?? "", "base64url").at(-1) ?? 0) & 1) === 0) return "its RSA modulus is even";
  if (exponent <= 1n || exponent % 2n === 0n || exponent >= 2n ** BigInt(MAX_RSA_PUBLIC_EXPONENT_BITS)) {
    return `its RSA public exponent is not an odd number above 1 of at most ${MAX_RSA_PUBLIC_EXPONENT_BITS} bits`;
  }
  return undefined;
}

/** The issuer failed, never the caller: its answer is not a key set (HTML, `{}`, cut short, too many keys). */
function keySetInvalid(message: string): Error {
  return Object.assign(new Error(message), { name: "KeySetInvalidError" });
}
