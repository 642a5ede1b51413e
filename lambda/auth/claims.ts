import { ApiError } from "../errors.ts";
import { invalidToken, malformed } from "./jws.ts";

/** What a token's claims must say: the configuration's issuer, audiences, clients and scope. */
export interface ClaimsPolicy {
  issuer: string;
  /** Accepted `aud` values; empty: `aud` is not checked. */
  audiences: string[];
  /** Accepted `client_id` values (Cognito access tokens carry no `aud`); empty: not checked. */
  clientIds: string[];
  requiredScope: string;
}

/** Leeway for the issuer's clock and ours, either way, on `exp` and `nbf`. */
export const CLOCK_SKEW_SECONDS = 5;

/** `new Date(seconds * 1000)` is a valid date up to this many seconds either side of 1970. */
const MAX_REPRESENTABLE_SECONDS = 8.64e12;

const TIME_CLAIMS = ["exp", "nbf", "iat"] as const;
const STRING_CLAIMS = ["sub", "scope", "jti"] as const;

/**
 * Before any key is looked up, refuses a token whose unverified claims are not worth a signature check:
 * - an `iss` other than the configured issuer, compared first: nothing is looked up, fetched or kept
 *   for a token that does not even claim to come from our issuer;
 * - registered claims of the wrong type (RFC 7519 §4.1): times that are not finite numbers, `sub`,
 *   `scope`, `jti` that are not strings, an `aud` that is neither a string nor a list of them;
 * - `exp` or `nbf` outside what a Date can hold, which no issuer sends.
 * Nothing of the caller's values is echoed.
 */
export function checkClaimsBeforeKeyLookup(claims: Record<string, unknown>, policy: ClaimsPolicy): void {
  if (claims.iss !== policy.issuer) throw invalidToken("wrong issuer (iss)");
  for (const claim of TIME_CLAIMS) {
    if (claims[claim] !== undefined && !Number.isFinite(claims[claim])) throw malformed();
  }
  for (const claim of STRING_CLAIMS) {
    if (claims[claim] !== undefined && typeof claims[claim] !== "string") throw malformed();
  }
  const { aud } = claims;
  if (aud !== undefined && typeof aud !== "string") {
    if (!Array.isArray(aud) || aud.some((audience) => typeof audience !== "string")) throw malformed();
  }
  for (const claim of ["exp", "nbf"] as const) {
    const seconds = claims[claim];
    if (typeof seconds === "number" && !(Math.abs(seconds) <= MAX_REPRESENTABLE_SECONDS)) {
      throw invalidToken(`${claim} is out of range`);
    }
  }
}

/**
 * After the signature, the claims against the policy: the time window (an `exp` is required), audience,
 * client, and scope (403). `nowSeconds` is the time of the request.
 */
export function checkClaimsAfterSignature(
  claims: Record<string, unknown>,
  policy: ClaimsPolicy,
  nowSeconds: number,
): void {
  const { exp, nbf, aud } = claims;
  // RFC 7519 §4.1.4: the current time must be before `exp`; at `exp` (plus the skew) the token has expired.
  if (typeof exp === "number" && exp + CLOCK_SKEW_SECONDS <= nowSeconds) {
    throw new ApiError("InvalidToken", "the token has expired");
  }
  if (typeof nbf === "number" && nbf - CLOCK_SKEW_SECONDS > nowSeconds) {
    throw new ApiError("InvalidToken", "the token is not valid yet");
  }
  if (policy.audiences.length > 0) {
    const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
    if (!audiences.some((audience) => policy.audiences.includes(audience))) {
      throw invalidToken("wrong audience");
    }
  }
  if (typeof exp !== "number") throw new ApiError("InvalidToken", "the token has no expiry (exp)");
  const clientId = typeof claims.client_id === "string" ? claims.client_id : undefined;
  if (policy.clientIds.length > 0 && (clientId === undefined || !policy.clientIds.includes(clientId))) {
    throw new ApiError("InvalidToken", "the token was issued to another client");
  }
  if (!grantedScopes(claims).includes(policy.requiredScope)) {
    throw new ApiError("InsufficientScope", `the token lacks the scope '${policy.requiredScope}'`, {
      scope: policy.requiredScope,
    });
  }
}

/** `scope` is a space-separated string (RFC 8693, Cognito); `scp` a list or string (Okta, Entra ID). */
function grantedScopes(claims: Record<string, unknown>): string[] {
  const scopes: string[] = [];
  for (const claim of [claims.scope, claims.scp]) {
    if (typeof claim === "string") scopes.push(...claim.split(" "));
    else if (Array.isArray(claim)) scopes.push(...claim.filter((item) => typeof item === "string"));
  }
  return scopes;
}
