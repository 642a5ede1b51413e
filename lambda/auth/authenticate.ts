import {
  JwtExpiredError,
  JwtInvalidAudienceError,
  JwtInvalidIssuerError,
  JwtInvalidSignatureAlgorithmError,
  JwtInvalidSignatureError,
  JwtNotBeforeError,
  JwtParseError,
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
} from "aws-jwt-verify/error";
import type { Jwk } from "aws-jwt-verify/jwk";
import { decomposeUnverifiedJwt } from "aws-jwt-verify/jwt";
import type { JwtPayload } from "aws-jwt-verify/jwt-model";
import { ApiError } from "../errors.ts";
import { bearerToken } from "./bearer-credentials.ts";
import {
  type CustomJwtCheck,
  createIssuerKeys,
  type IssuerKeys,
  type IssuerKeysOptions,
} from "./issuer-keys.ts";

/** What a token must say: the configuration's issuer, audiences (empty: not checked) and clients (idem). */
export interface TokenPolicy {
  issuer: string;
  jwksUrl: string;
  audiences: string[];
  /** Accepted `client_id` values (Cognito access tokens carry no `aud`). */
  clientIds: string[];
}

export interface Caller {
  subject: string;
  clientId: string | undefined;
}

export type Authenticate = (
  authorizationHeader: string | undefined,
  requiredScope: string,
) => Promise<Caller>;

export interface AuthenticatorOptions extends IssuerKeysOptions {
  /** The issuer's keys (productionDependencies builds them, to refresh them after answers). */
  keys?: IssuerKeys;
}

/** `new Date(seconds * 1000)` is a valid date up to this many seconds either side of 1970. */
const MAX_REPRESENTABLE_SECONDS = 8.64e12;

/** The curve of each ES alg (RFC 7518 §3.4): aws-jwt-verify would verify ES384 with a P-256 key. */
const CURVE_OF: Record<string, string> = { ES256: "P-256", ES384: "P-384", ES512: "P-521" };

/** Whether `alg` is one the key verifies (RFC 7518 §3, RFC 8037 §3.1): aws-jwt-verify checks a key's own alg only. */
function fitsKey(alg: string, { kty, crv }: Jwk): boolean {
  return alg.startsWith("RS") ? kty === "RSA" : alg === "EdDSA" ? kty === "OKP" : CURVE_OF[alg] === crv;
}

/**
 * The bearer-token check; each failure a 401 invalid_token unless said otherwise:
 * 1. the Authorization header's one Bearer token (400 or a bare 401 otherwise, bearer-credentials.ts);
 * 2. before any key is looked up, aws-jwt-verify's decomposition, then `iss` (nothing is fetched for a token
 *    not even claiming our issuer), a kid left out of the key set (why), `exp`/`nbf` a Date can hold;
 * 3. aws-jwt-verify: the key of the kid (issuer-keys.ts: 503 when the issuer fails), an alg of RS256/384/512,
 *    ES256/384/512 or EdDSA (never none, HS*, PS*), the signature, `exp`/`nbf` with CLOCK_SKEW_SECONDS, `aud`;
 * 4. what it does not check: no `crit` (RFC 7515 §4.1.11), the alg fits the key, an `exp`, `client_id`, and
 *    the route's scope in `scope` or `scp` (403).
 */
export function createAuthenticator(policy: TokenPolicy, options: AuthenticatorOptions = {}): Authenticate {
  const keys = options.keys ?? createIssuerKeys(policy, options);
  const checkAfterSignature: CustomJwtCheck = ({ header, payload, jwk }) => {
    if (Object.hasOwn(header, "crit"))
      invalid("it requires a header extension this API does not implement (crit)");
    if (!fitsKey(String(header.alg), jwk)) invalid("signature algorithm not allowed");
    if (payload.exp === undefined) invalid("it has no expiry (exp)");
    const clientId = typeof payload.client_id === "string" ? payload.client_id : "";
    if (policy.clientIds.length > 0 && !policy.clientIds.includes(clientId)) {
      invalid("it was issued to another client (client_id)");
    }
  };

  /** A kid left out of the key set held is told why, and fetches nothing (key-set.ts). */
  const refuseLeftOut = (kid: string | undefined) => {
    const reason = kid === undefined ? undefined : keys.leftOutReason(kid);
    if (reason !== undefined) invalid(`the issuer's key it names cannot be used: ${reason}`);
  };

  return async (authorizationHeader, requiredScope) => {
    const token = bearerToken(authorizationHeader);
    let payload: JwtPayload;
    let kid: string | undefined;
    try {
      const unverified = decomposeUnverifiedJwt(token);
      kid = unverified.header.kid;
      if (unverified.payload.iss !== policy.issuer) invalid("wrong issuer (iss)");
      refuseLeftOut(kid);
      for (const claim of ["exp", "nbf"] as const) {
        if (Math.abs(unverified.payload[claim] ?? 0) > MAX_REPRESENTABLE_SECONDS)
          invalid(`${claim} is out of range`);
      }
      payload = await keys.verify(token, checkAfterSignature);
    } catch (error) {
      // The set just fetched for an unknown kid may have left its key out.
      if (error instanceof KidNotFoundInJwksError) refuseLeftOut(kid);
      throw asApiError(error);
    }
    if (!grantedScopes(payload).includes(requiredScope)) {
      throw new ApiError("InsufficientScope", `the token lacks the scope '${requiredScope}'`, {
        scope: requiredScope,
      });
    }
    return {
      subject: payload.sub ?? "",
      clientId: typeof payload.client_id === "string" ? payload.client_id : undefined,
    };
  };
}

/** Why aws-jwt-verify refused a token, by its error's class. */
const REASONS: [new (...args: never[]) => Error, string][] = [
  [JwtParseError, "malformed token"],
  [JwtInvalidSignatureAlgorithmError, "signature algorithm not allowed"],
  [JwtInvalidSignatureError, "bad signature"],
  [JwtExpiredError, "it has expired"],
  [JwtNotBeforeError, "it is not valid yet"],
  [JwtInvalidIssuerError, "wrong issuer (iss)"],
  [JwtInvalidAudienceError, "wrong audience (aud)"],
  [JwtWithoutValidKidError, "unknown signing key"],
  [KidNotFoundInJwksError, "unknown signing key"],
];

/**
 * A refusal as this API answers it: its own ApiErrors as they are, aws-jwt-verify's as 401s saying why, and
 * node:crypto's refusal to verify with a key of another type (RS256 with an Ed25519 key) as an alg not
 * allowed. Anything else is a bug: a 500.
 */
function asApiError(error: unknown): unknown {
  if (error instanceof ApiError || !(error instanceof Error)) return error;
  if (String((error as { code?: unknown }).code).startsWith("ERR_CRYPTO_")) {
    return new ApiError("InvalidToken", "the token is invalid: signature algorithm not allowed");
  }
  const reason = REASONS.find(([refusal]) => error instanceof refusal)?.[1];
  if (reason === undefined) return error;
  const code = error instanceof KidNotFoundInJwksError ? "UnknownSigningKey" : "InvalidToken";
  return new ApiError(code, `the token is invalid: ${reason}`, { cause: error });
}

function invalid(reason: string): never {
  throw new ApiError("InvalidToken", `the token is invalid: ${reason}`);
}

/** `scope` is a space-separated string (RFC 8693, Cognito); `scp` a list or string (Okta, Entra ID). */
function grantedScopes({ scope, scp }: JwtPayload): unknown[] {
  return [scope, scp].flatMap((claim) =>
    typeof claim === "string" ? claim.split(" ") : Array.isArray(claim) ? claim : [],
  );
}
