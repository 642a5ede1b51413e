import type { KeyObject } from "node:crypto";
import { ApiError } from "../errors.ts";
import { isObject } from "../is-object.ts";
import { nodeCrypto } from "../node-crypto.ts";

/** A token as sent, split and decoded but not verified: nothing in it is to be trusted yet. */
export interface UnverifiedJws {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  /** `<header>.<payload>` as sent: the bytes the signature covers. */
  signingInput: string;
  signature: Buffer;
}

/** A JWS algorithm this API verifies: RSASSA-PKCS1-v1_5 with node:crypto's digest of that name. */
export interface JwsAlgorithm {
  name: string;
  digest: "sha256" | "sha384" | "sha512";
}

/**
 * The algorithms a token may be signed with (RFC 7518 §3.3): RS256, RS384 and RS512 only. Cognito, the
 * stack's issuer, signs RS256, as do the common OpenID providers by default; ES256/384/512 and EdDSA
 * would be code every cold start parses for issuers this API's users do not have, so their tokens are
 * refused like any alg not listed. Never `none`, never HS* (the issuer's public key as an HMAC secret),
 * no PS*. A Map, so that an `alg` such as `constructor` finds nothing inherited.
 */
const JWS_ALGORITHMS: ReadonlyMap<string, JwsAlgorithm> = new Map([
  ["RS256", { name: "RS256", digest: "sha256" }],
  ["RS384", { name: "RS384", digest: "sha384" }],
  ["RS512", { name: "RS512", digest: "sha512" }],
]);

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A JWS in compact serialization (RFC 7515 §7.1): exactly three base64url segments, none padded or
 * empty, the header and payload each a JSON object in UTF-8. Anything else is a malformed token (401),
 * whatever it is: a JSON serialization, a JWE (five segments), a token cut or padded in transit.
 */
export function decodeCompactJws(token: string): UnverifiedJws {
  const [header, payload, signature, extra] = token.split(".", 4);
  if (header === undefined || payload === undefined || signature === undefined || extra !== undefined) {
    throw malformed();
  }
  return {
    header: jsonObject(header),
    payload: jsonObject(payload),
    signingInput: `${header}.${payload}`,
    signature: base64urlBytes(signature),
  };
}

/**
 * The header's `alg` if it is one of ours, refusing first any `crit`: RFC 7515 §4.1.11 lists there the
 * extensions a recipient must understand, and this API implements none (`b64: false` under `crit` would
 * sign a payload other than the one read). A list of names is an unsupported extension; anything else
 * there is malformed. Nothing of the header is echoed.
 */
export function headerAlgorithm(header: Record<string, unknown>): JwsAlgorithm {
  if (Object.hasOwn(header, "crit")) {
    const { crit } = header;
    const wellFormed =
      Array.isArray(crit) && crit.length > 0 && crit.every((name) => typeof name === "string" && name !== "");
    throw invalidToken(
      wellFormed
        ? "it requires a header extension this API does not implement (crit)"
        : "malformed crit header",
    );
  }
  const algorithm = typeof header.alg === "string" ? JWS_ALGORITHMS.get(header.alg) : undefined;
  if (algorithm === undefined) throw algorithmNotAllowed();
  return algorithm;
}

/**
 * Whether the token's signature is `algorithm`'s signature of its signing input under `key`, an RSA key
 * of `modulusBytes`: an RSA signature is exactly as long as the modulus, checked first; whatever
 * node:crypto throws on a signature is a bad signature.
 */
export function signatureIsValid(
  algorithm: JwsAlgorithm,
  { key, modulusBytes }: { key: KeyObject; modulusBytes: number },
  { signingInput, signature }: UnverifiedJws,
): boolean {
  if (signature.length !== modulusBytes) return false;
  try {
    return nodeCrypto().verify(algorithm.digest, Buffer.from(signingInput), key, signature);
  } catch {
    return false;
  }
}

/** The bytes of a non-empty base64url string in its one canonical spelling (below); else undefined. */
export function canonicalBase64url(segment: string): Buffer | undefined {
  const bytes = Buffer.from(segment, "base64url");
  return segment !== "" && bytes.toString("base64url") === segment ? bytes : undefined;
}

/**
 * RFC 7515 §2: base64url without padding. Node's decoder skips what is not of the alphabet, so a
 * segment is taken only if encoding its bytes gives it back: no padding, no other characters, no
 * length of 4n+1, no stray bits in the last character. Then one token has one spelling.
 */
function base64urlBytes(segment: string): Buffer {
  const bytes = canonicalBase64url(segment);
  if (bytes === undefined) throw malformed();
  return bytes;
}

function jsonObject(segment: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(base64urlBytes(segment)));
  } catch {
    throw malformed();
  }
  if (!isObject(value)) throw malformed();
  return value;
}

/**
 * A token refused as invalid (401 invalid_token; UnknownSigningKey counts apart), saying why: every such
 * message is "the token is invalid: " and the reason, the prefix written here once.
 */
export function invalidToken(
  reason: string,
  code: "InvalidToken" | "UnknownSigningKey" = "InvalidToken",
): ApiError {
  return new ApiError(code, `the token is invalid: ${reason}`);
}

/** The reason for a token whose kid names no key the issuer publishes for signatures. */
export const UNKNOWN_SIGNING_KEY = "unknown signing key";

export function malformed(): ApiError {
  return invalidToken("malformed token");
}

export function algorithmNotAllowed(): ApiError {
  return invalidToken("signature algorithm not allowed");
}
