import { InvalidTokenError } from "../errors.ts";
import { malformed } from "./compact-jws.ts";

/** `new Date(seconds * 1000)` is a valid date up to this many seconds either side of 1970. */
const MAX_REPRESENTABLE_SECONDS = 8.64e12;

const TIME_CLAIMS = ["exp", "nbf", "iat"] as const;
const STRING_CLAIMS = ["sub", "scope", "jti"] as const;

/**
 * Refuses, before any key is looked up, a token whose unverified claims are not worth a signature check:
 * - an `iss` other than the configured issuer, compared first: nothing is looked up, fetched or kept
 *   for a token that does not even claim to come from our issuer;
 * - registered claims of the wrong type (RFC 7519 §4.1): times that are not finite numbers, `sub`,
 *   `scope`, `jti` that are not strings, an `aud` that is neither a string nor a list of them;
 * - `exp` or `nbf` outside what a Date can hold, which no issuer sends.
 * Nothing of the caller's values is echoed.
 */
export function refuseUncheckableClaims(payload: Record<string, unknown>, issuer: string): void {
  if (payload.iss !== issuer) throw new InvalidTokenError("the token is invalid: wrong issuer (iss)");
  for (const claim of TIME_CLAIMS) {
    if (payload[claim] !== undefined && !Number.isFinite(payload[claim])) throw malformed();
  }
  for (const claim of STRING_CLAIMS) {
    if (payload[claim] !== undefined && typeof payload[claim] !== "string") throw malformed();
  }
  const { aud } = payload;
  if (aud !== undefined && typeof aud !== "string") {
    if (!Array.isArray(aud) || aud.some((audience) => typeof audience !== "string")) throw malformed();
  }
  for (const claim of ["exp", "nbf"] as const) {
    const seconds = payload[claim];
    if (typeof seconds === "number" && !(Math.abs(seconds) <= MAX_REPRESENTABLE_SECONDS)) {
      throw new InvalidTokenError(`the token is invalid: ${claim} is out of range`);
    }
  }
}
