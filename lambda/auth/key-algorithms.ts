import { JwtInvalidSignatureAlgorithmError } from "aws-jwt-verify/error";
import type { JwkWithKid } from "aws-jwt-verify/jwk";

/**
 * The signature algorithms a key can verify, by its type and curve (RFC 7518 §3.3–3.4, RFC 8037 §3.1):
 * `<alg> <kty>[ <crv>]`. A key set may publish keys without `alg` (Entra ID's do), leaving the token's
 * header to choose; WebCrypto then refuses to import an RSA key for ES256 with a DataError, which a
 * forged header must not turn into a 500.
 */
const ALGORITHM_FITS_KEY = new Set([
  "RS256 RSA",
  "RS384 RSA",
  "RS512 RSA",
  "ES256 EC P-256",
  "ES384 EC P-384",
  "ES512 EC P-521",
  "EdDSA OKP Ed25519",
  "EdDSA OKP Ed448",
]);

/** Refuses (401) a token whose `alg` cannot be verified with the key its `kid` names. */
export function assertAlgorithmFitsKey(alg: unknown, jwk: JwkWithKid): void {
  const keyType = jwk.kty === "RSA" ? "RSA" : `${jwk.kty} ${jwk.crv}`;
  if (!ALGORITHM_FITS_KEY.has(`${alg} ${keyType}`)) {
    throw new JwtInvalidSignatureAlgorithmError("alg does not fit the key", String(alg));
  }
}
