import { canonicalBase64url } from "./jws.ts";

/** The members that make an RSA public key (RFC 7518 §6.3.1): what its strength is read from. */
export interface PublicKeyMembers {
  kty: string;
  n?: string;
  e?: string;
}

/** RFC 7518 §3.3: "A key of size 2048 bits or larger MUST be used with these algorithms." */
export const MIN_RSA_MODULUS_BITS = 2048;
/**
 * Issuers publish 2048 to 4096 bits. A forged token costs a verification, which grows with the square of
 * the modulus: at 8192 bits about 10 times a 2048-bit key's, at OpenSSL's limit of 16384 about 40 times.
 */
export const MAX_RSA_MODULUS_BITS = 8192;
/**
 * Issuers use 65537 (a few, 3). A verification costs a multiplication per bit of the exponent, so one of
 * thousands of bits makes every forged token dear; 32 bits is the most Windows' CryptoAPI can hold (its
 * RSAPUBKEY.pubexp is a DWORD), so no key any issuer's tooling makes is refused by it, and it keeps a
 * verification within twice a 65537 key's cost.
 */
export const MAX_RSA_PUBLIC_EXPONENT_BYTES = 4;

/**
 * Why a published key is never to be trusted with a token, read from its own bytes before node:crypto
 * sees it, or undefined. The reasons go into answers and log lines, so they name no key material and
 * echo nothing the issuer wrote. A key of another kty (EC, OKP, oct) verifies none of this API's algs.
 */
export function keyWeakness(jwk: PublicKeyMembers): string | undefined {
  if (jwk.kty !== "RSA") return "its kty is not RSA: this API verifies RS256, RS384 and RS512 tokens";
  const modulus = unsignedBytes(jwk.n);
  const exponent = unsignedBytes(jwk.e);
  if (modulus === undefined) return "its n is missing or not base64url";
  if (exponent === undefined) return "its e is missing or not base64url";
  const bits = bitLength(modulus);
  if (bits < MIN_RSA_MODULUS_BITS) {
    return `its RSA modulus has ${bits} bits; at least ${MIN_RSA_MODULUS_BITS} are required (RFC 7518 section 3.3)`;
  }
  if (bits > MAX_RSA_MODULUS_BITS) {
    return `its RSA modulus has ${bits} bits; at most ${MAX_RSA_MODULUS_BITS} are taken`;
  }
  if (((modulus.at(-1) ?? 0) & 1) === 0) return "its RSA modulus is even";
  if (exponent.length > MAX_RSA_PUBLIC_EXPONENT_BYTES) {
    return `its RSA public exponent has ${bitLength(exponent)} bits; at most ${MAX_RSA_PUBLIC_EXPONENT_BYTES * 8} are taken`;
  }
  if (((exponent.at(-1) ?? 0) & 1) === 0) return "its RSA public exponent is even";
  if (exponent.length === 1 && exponent[0] === 1) return "its RSA public exponent is 1";
  return undefined;
}

/** A big-endian unsigned integer's bytes without leading zeros (RFC 7518 §6.3.1.1 allows none anyway). */
function unsignedBytes(member: string | undefined): Buffer | undefined {
  const bytes = member === undefined ? undefined : canonicalBase64url(member);
  if (bytes === undefined) return undefined;
  const first = bytes.findIndex((byte) => byte !== 0);
  return first === -1 ? Buffer.alloc(0) : bytes.subarray(first);
}

function bitLength(bytes: Buffer): number {
  return bytes.length === 0 ? 0 : (bytes.length - 1) * 8 + (32 - Math.clz32(bytes[0] ?? 0));
}
