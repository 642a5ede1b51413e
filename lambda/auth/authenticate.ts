import {
  FetchError,
  JwkInvalidKtyError,
  JwtBaseError,
  JwtExpiredError,
  JwtInvalidAudienceError,
  JwtInvalidIssuerError,
  JwtInvalidSignatureAlgorithmError,
  JwtInvalidSignatureError,
  JwtNotBeforeError,
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
  WaitPeriodNotYetEndedJwkError,
} from "aws-jwt-verify/error";
import { SimpleJwksCache, SimplePenaltyBox } from "aws-jwt-verify/jwk";
import { JwtVerifier } from "aws-jwt-verify/jwt-verifier";
import {
  DependencyUnavailableError,
  InsufficientScopeError,
  InvalidTokenError,
  MissingCredentialsError,
} from "../errors.ts";
import { createJwksFetcher } from "./jwks-fetcher.ts";

export interface TokenPolicy {
  issuer: string;
  jwksUrl: string;
  /** Accepted `aud` values; empty: `aud` is not checked. */
  audiences: string[];
  /** Accepted `client_id` values (Cognito access tokens carry no `aud`); empty: not checked. */
  clientIds: string[];
  requiredScope: string;
}

export interface Caller {
  subject: string;
  clientId: string | undefined;
}

export type Authenticate = (authorizationHeader: string | undefined) => Promise<Caller>;

const CLOCK_SKEW_SECONDS = 5;
const JWKS_RESPONSE_TIMEOUT_MS = 1000;
/** A token naming an unknown key refetches the key set at most once per this interval. */
const UNKNOWN_KEY_REFETCH_INTERVAL_SECONDS = 10;
const ISSUER_RETRY_AFTER_SECONDS = 5;
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Builds the bearer-token check. The verifier (and so the issuer's key set) lives as long as the
 * function instance: keys are fetched once, and again only for a token naming a key not yet seen.
 * aws-jwt-verify verifies RS*, ES* and EdDSA signatures only: `none` and HS* tokens never pass.
 */
export function createAuthenticator(policy: TokenPolicy): Authenticate {
  const verifier = JwtVerifier.create(
    {
      issuer: policy.issuer,
      jwksUri: policy.jwksUrl,
      audience: policy.audiences.length > 0 ? policy.audiences : null,
      graceSeconds: CLOCK_SKEW_SECONDS,
    },
    {
      jwksCache: new SimpleJwksCache({
        fetcher: createJwksFetcher(JWKS_RESPONSE_TIMEOUT_MS),
        penaltyBox: new SimplePenaltyBox({ waitSeconds: UNKNOWN_KEY_REFETCH_INTERVAL_SECONDS }),
      }),
    },
  );

  return async (authorizationHeader) => {
    const token = bearerToken(authorizationHeader);
    let claims: Record<string, unknown>;
    try {
      claims = (await verifier.verify(token)) as Record<string, unknown>;
    } catch (error) {
      throw tokenFailure(error);
    }
    if (typeof claims.exp !== "number") throw new InvalidTokenError("the token has no expiry (exp)");
    const clientId = typeof claims.client_id === "string" ? claims.client_id : undefined;
    if (policy.clientIds.length > 0 && (clientId === undefined || !policy.clientIds.includes(clientId))) {
      throw new InvalidTokenError("the token was issued to another client");
    }
    if (!grantedScopes(claims).includes(policy.requiredScope)) {
      throw new InsufficientScopeError(policy.requiredScope);
    }
    return { subject: typeof claims.sub === "string" ? claims.sub : "", clientId };
  };
}

function bearerToken(authorizationHeader: string | undefined): string {
  if (authorizationHeader === undefined || authorizationHeader.trim() === "") {
    throw new MissingCredentialsError("the Authorization header is missing");
  }
  const match = BEARER.exec(authorizationHeader.trim());
  if (match?.[1] === undefined) {
    throw new MissingCredentialsError("the Authorization header must carry a Bearer token");
  }
  return match[1];
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

function tokenFailure(error: unknown): Error {
  if (error instanceof FetchError) {
    return new DependencyUnavailableError(
      "the token issuer's signing keys could not be fetched",
      ISSUER_RETRY_AFTER_SECONDS,
      { cause: error },
    );
  }
  if (error instanceof JwtExpiredError) return new InvalidTokenError("the token has expired");
  if (error instanceof JwtNotBeforeError) return new InvalidTokenError("the token is not valid yet");
  if (error instanceof JwtBaseError) return new InvalidTokenError(`the token is invalid: ${describe(error)}`);
  return error instanceof Error ? error : new Error(String(error));
}

/** The library's messages may quote claim values; answer with the kind of failure only. */
function describe(error: JwtBaseError): string {
  if (error instanceof JwtInvalidIssuerError) return "wrong issuer";
  if (error instanceof JwtInvalidAudienceError) return "wrong audience";
  if (error instanceof JwtInvalidSignatureError) return "bad signature";
  if (error instanceof JwtInvalidSignatureAlgorithmError || error instanceof JwkInvalidKtyError) {
    return "signature algorithm not allowed";
  }
  if (
    error instanceof KidNotFoundInJwksError ||
    error instanceof WaitPeriodNotYetEndedJwkError ||
    error instanceof JwtWithoutValidKidError
  ) {
    return "unknown signing key";
  }
  return "malformed token";
}
