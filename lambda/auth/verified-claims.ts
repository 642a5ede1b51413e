import { InsufficientScopeError, InvalidTokenError } from "../errors.ts";

/** What a verified token's claims must say; the policy's fields as authenticate.ts's TokenPolicy has them. */
export interface ClaimsPolicy {
  /** Accepted `aud` values; empty: `aud` is not checked. */
  audiences: string[];
  /** Accepted `client_id` values (Cognito access tokens carry no `aud`); empty: not checked. */
  clientIds: string[];
  requiredScope: string;
}

/** Leeway for the issuer's clock and ours, either way, on `exp` and `nbf`. */
export const CLOCK_SKEW_SECONDS = 5;

/**
 * The claims of a token whose signature was verified, against the policy: its time window (an `exp` is
 * required), audience, client and scope. `nowSeconds` is the time of the request; the types and ranges
 * were checked before the signature (unverified-claims.ts).
 */
export function checkVerifiedClaims(
  claims: Record<string, unknown>,
  policy: ClaimsPolicy,
  nowSeconds: number,
): void {
  const { exp, nbf, aud } = claims;
  // RFC 7519 §4.1.4: the current time must be before `exp`; at `exp` (plus the skew) the token has expired.
  if (typeof exp === "number" && exp + CLOCK_SKEW_SECONDS <= nowSeconds) {
    throw new InvalidTokenError("the token has expired");
  }
  if (typeof nbf === "number" && nbf - CLOCK_SKEW_SECONDS > nowSeconds) {
    throw new InvalidTokenError("the token is not valid yet");
  }
  if (policy.audiences.length > 0) {
    const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
    if (!audiences.some((audience) => policy.audiences.includes(audience))) {
      throw new InvalidTokenError("the token is invalid: wrong audience");
    }
  }
  if (typeof exp !== "number") throw new InvalidTokenError("the token has no expiry (exp)");
  const clientId = typeof claims.client_id === "string" ? claims.client_id : undefined;
  if (policy.clientIds.length > 0 && (clientId === undefined || !policy.clientIds.includes(clientId))) {
    throw new InvalidTokenError("the token was issued to another client");
  }
  if (!grantedScopes(claims).includes(policy.requiredScope)) {
    throw new InsufficientScopeError(policy.requiredScope);
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
