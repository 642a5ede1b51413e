import type { DecomposedJwt } from "aws-jwt-verify/jwt";
import { InvalidTokenError } from "../errors.ts";

/** `new Date(seconds * 1000)` is a valid date up to this many seconds either side of 1970. */
const MAX_REPRESENTABLE_SECONDS = 8.64e12;

/**
 * Refuses, before the verifier sees it, a token whose unverified parts would make the verifier keep
 * or throw something a caller chose:
 * - an `iss` other than the configured issuer: aws-jwt-verify caches converted keys per `iss`, so
 *   each forged one would cost memory for the life of the instance;
 * - `exp` or `nbf` outside what a Date can hold: the library formats them into its messages
 *   and would throw a RangeError (a 500).
 * Nothing of the caller's values is echoed.
 */
export function refuseUncheckableClaims({ payload }: DecomposedJwt, issuer: string): void {
  if (payload.iss !== issuer) throw new InvalidTokenError("the token is invalid: wrong issuer (iss)");
  for (const claim of ["exp", "nbf"] as const) {
    const seconds = payload[claim];
    if (typeof seconds === "number" && !(Math.abs(seconds) <= MAX_REPRESENTABLE_SECONDS)) {
      throw new InvalidTokenError(`the token is invalid: ${claim} is out of range`);
    }
  }
}
