import type { KeyObject } from "node:crypto";
import { loadedNodeCrypto } from "../node-crypto.ts";
import type { JsonWebKey } from "./json-web-keys.ts";
import type { JwsAlgorithm } from "./key-algorithms.ts";

type NodeCrypto = typeof import("node:crypto");

/**
 * A published key imported into node:crypto, or why it cannot be: only the members that define the key
 * reach it. Its import refuses an EC point that is not on the key's curve (a P-384 point under
 * `crv: P-256` is one); the checks of key-strength.ts come first, so whatever else it refuses is said
 * as such.
 */
export function importVerificationKey(
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

/**
 * Whether `signature` is `algorithm`'s signature of `signingInput` under `key`, synchronously: the key
 * was imported with its key set, so node:crypto is loaded. The length is checked first (r‖s for ECDSA,
 * RFC 7518 §3.4; the modulus's for RSA); whatever node:crypto throws on a signature is a bad signature.
 */
export function signatureIsValid(
  algorithm: JwsAlgorithm,
  expectedLength: number | undefined,
  key: KeyObject,
  signingInput: string,
  signature: Buffer,
): boolean {
  const length = expectedLength ?? Math.ceil((key.asymmetricKeyDetails?.modulusLength ?? 0) / 8);
  if (signature.length !== length) return false;
  try {
    return loadedNodeCrypto().verify(
      algorithm.digest,
      Buffer.from(signingInput),
      { key, dsaEncoding: "ieee-p1363" }, // read for ECDSA only
      signature,
    );
  } catch {
    return false;
  }
}
