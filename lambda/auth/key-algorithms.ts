import { InvalidTokenError } from "../errors.ts";
import type { JsonWebKey } from "./json-web-keys.ts";

/** How a JWS algorithm verifies: node:crypto's digest (none for EdDSA) and the keys it fits. */
export interface JwsAlgorithm {
  name: string;
  digest: "sha256" | "sha384" | "sha512" | null;
  /** `<kty>` or `<kty> <crv>`; for EC and OKP, the curve fixes the signature's length in bytes. */
  keys: ReadonlyMap<string, number | undefined>;
}

const rsa = (name: string, digest: JwsAlgorithm["digest"]) => ({
  name,
  digest,
  keys: new Map([["RSA", undefined]]),
});

/**
 * The algorithms a token may be signed with (RFC 7518 §3.3–3.4, RFC 8037 §3.1): aws-jwt-verify's set,
 * which this API shipped with. Never `none`, never HS* (the issuer's public key as an HMAC secret),
 * no PS*. A Map, so that an `alg` such as `constructor` finds nothing inherited. The EC and EdDSA
 * signatures are fixed-length (r‖s for ECDSA, RFC 7518 §3.4); an RSA one is as long as the modulus.
 */
const JWS_ALGORITHMS: ReadonlyMap<string, JwsAlgorithm> = new Map(
  [
    rsa("RS256", "sha256"),
    rsa("RS384", "sha384"),
    rsa("RS512", "sha512"),
    { name: "ES256", digest: "sha256" as const, keys: new Map([["EC P-256", 64]]) },
    { name: "ES384", digest: "sha384" as const, keys: new Map([["EC P-384", 96]]) },
    { name: "ES512", digest: "sha512" as const, keys: new Map([["EC P-521", 132]]) },
    {
      name: "EdDSA",
      digest: null,
      keys: new Map([
        ["OKP Ed25519", 64],
        ["OKP Ed448", 114],
      ]),
    },
  ].map((algorithm) => [algorithm.name, algorithm]),
);

export function keyType(jwk: JsonWebKey): string {
  return jwk.kty === "RSA" ? "RSA" : `${jwk.kty} ${jwk.crv}`;
}

/** The token's `alg` if it is one of ours; else 401, before any key is looked up or fetched. */
export function allowedAlgorithm(alg: unknown): JwsAlgorithm {
  const algorithm = typeof alg === "string" ? JWS_ALGORITHMS.get(alg) : undefined;
  if (algorithm === undefined) throw algorithmNotAllowed();
  return algorithm;
}

export function fitsKeyType(algorithm: JwsAlgorithm, type: string): boolean {
  return algorithm.keys.has(type);
}

export function algorithmNotAllowed(): InvalidTokenError {
  return new InvalidTokenError("the token is invalid: signature algorithm not allowed");
}
