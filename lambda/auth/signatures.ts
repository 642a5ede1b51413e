import type { KeyObject } from "node:crypto";
import { loadedNodeCrypto } from "../node-crypto.ts";
import type { JsonWebKey } from "./json-web-keys.ts";
import type { JwsAlgorithm } from "./key-algorithms.ts";

type NodeCrypto = typeof import("node:crypto");

/** A published key made ready to verify with, or why it cannot be: then the issuer's fault (503). */
export type VerificationKey = { key: KeyObject; failure?: undefined } | { key?: undefined; failure: Error };

/**
 * Imports a published key, once per key set (IssuerKeyCache keeps the result): only the members that
 * define the key reach node:crypto. A key it cannot import, or published for operations other than
 * `verify` (RFC 7517 §4.3), cannot check any token, so it is the issuer's fault, not the caller's.
 */
export function importVerificationKey({ createPublicKey }: NodeCrypto, jwk: JsonWebKey): VerificationKey {
  const { kty, crv, n, e, x, y, key_ops } = jwk;
  if (key_ops !== undefined && !(Array.isArray(key_ops) && key_ops.includes("verify"))) {
    return { failure: new Error("the key's key_ops do not include verify") };
  }
  try {
    return { key: createPublicKey({ key: { kty, crv, n, e, x, y }, format: "jwk" }) };
  } catch (error) {
    return { failure: error instanceof Error ? error : new Error(String(error)) };
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
