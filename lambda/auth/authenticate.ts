import {
  JwkInvalidKtyError,
  JwtBaseError,
  JwtExpiredError,
  JwtInvalidAudienceError,
  JwtInvalidSignatureAlgorithmError,
  JwtInvalidSignatureError,
  JwtNotBeforeError,
  JwtWithoutValidKidError,
  KidNotFoundInJwksError,
} from "aws-jwt-verify/error";
import type { Fetcher } from "aws-jwt-verify/https";
import { decomposeUnverifiedJwt } from "aws-jwt-verify/jwt";
import { JwtVerifier } from "aws-jwt-verify/jwt-verifier";
import { InsufficientScopeError, InvalidTokenError, IssuerUnavailableError } from "../errors.ts";
import { bearerToken } from "./bearer-credentials.ts";
import { refuseCriticalExtensions } from "./critical-extensions.ts";
import { IssuerKeyCache } from "./issuer-key-cache.ts";
import { createJwksFetcher } from "./jwks-fetcher.ts";
import { refuseUncheckableClaims } from "./unverified-claims.ts";

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

export interface AuthenticatorOptions {
  /**
   * Start fetching the issuer's key set now, so that the first request finds it fetched or under
   * way. A failed prefetch writes one line to stderr and nothing else: the first request needing a
   * key fetches again.
   */
  prefetchKeys?: boolean;
  /** Milliseconds since the epoch, for the key set's refetch window; tests move it instead of waiting. */
  clock?: () => number;
  /** How the key set is downloaded; tests wrap createJwksFetcher to count fetches or end them. */
  fetcher?: Fetcher;
}

export const CLOCK_SKEW_SECONDS = 5;
export const JWKS_RESPONSE_TIMEOUT_MS = 1000;
/**
 * After a key-set fetch that did not yield the key a token names (the key is not there, or the
 * issuer failed), the key set is not fetched again for this long: aws-jwt-verify's own penalty.
 */
export const KEY_SET_REFETCH_INTERVAL_SECONDS = 10;

/**
 * Builds the bearer-token check. The verifier (and so the issuer's key set) lives as long as the
 * function instance: keys are fetched once, and again only for a token naming a key not yet seen.
 * aws-jwt-verify verifies RS*, ES* and EdDSA signatures only: `none` and HS* tokens never pass.
 * How the key set is fetched and when it is refetched: see IssuerKeyCache.
 * Nothing it keeps is keyed by a value a caller chose: the key set by the configured URL, and the
 * library's converted keys by issuer, kid and alg, where the issuer is the configured one (compared
 * first, unverified-claims.ts), the kid one the issuer published, the alg one fitting it (at most 3).
 */
export function createAuthenticator(policy: TokenPolicy, options: AuthenticatorOptions = {}): Authenticate {
  const verifier = JwtVerifier.create(
    {
      issuer: policy.issuer,
      jwksUri: policy.jwksUrl,
      audience: policy.audiences.length > 0 ? policy.audiences : null,
      graceSeconds: CLOCK_SKEW_SECONDS,
    },
    {
      jwksCache: new IssuerKeyCache({
        fetcher: options.fetcher ?? createJwksFetcher(JWKS_RESPONSE_TIMEOUT_MS),
        refetchIntervalSeconds: KEY_SET_REFETCH_INTERVAL_SECONDS,
        clock: options.clock ?? Date.now,
      }),
    },
  );
  if (options.prefetchKeys) verifier.hydrate().catch(reportFailedPrefetch);

  return async (authorizationHeader) => {
    const token = bearerToken(authorizationHeader);
    let claims: Record<string, unknown>;
    try {
      const decomposed = decomposeUnverifiedJwt(token);
      refuseCriticalExtensions(decomposed.header);
      refuseUncheckableClaims(decomposed, policy.issuer);
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

/** `scope` is a space-separated string (RFC 8693, Cognito); `scp` a list or string (Okta, Entra ID). */
function grantedScopes(claims: Record<string, unknown>): string[] {
  const scopes: string[] = [];
  for (const claim of [claims.scope, claims.scp]) {
    if (typeof claim === "string") scopes.push(...claim.split(" "));
    else if (Array.isArray(claim)) scopes.push(...claim.filter((item) => typeof item === "string"));
  }
  return scopes;
}

/**
 * The issuer's faults arrive here already as IssuerUnavailableError (IssuerKeyCache) and pass through.
 * WebCrypto refusing a key (DOMException) is the issuer's fault too: a key whose type fits the token's
 * alg (key-algorithms.ts) fails to import only if the issuer published it broken. Anything else (a
 * TypeError, a RangeError) is a bug of ours or the library's: a 500 with its log line.
 */
function tokenFailure(error: unknown): Error {
  if (error instanceof JwtExpiredError) return new InvalidTokenError("the token has expired");
  if (error instanceof JwtNotBeforeError) return new InvalidTokenError("the token is not valid yet");
  if (error instanceof JwtBaseError) return new InvalidTokenError(`the token is invalid: ${describe(error)}`);
  if (error instanceof DOMException) {
    return new IssuerUnavailableError(
      "the token issuer publishes a signing key that cannot be used",
      KEY_SET_REFETCH_INTERVAL_SECONDS,
      { cause: error },
    );
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** The library's messages may quote claim values; answer with the kind of failure only. */
function describe(error: JwtBaseError): string {
  if (error instanceof JwtInvalidAudienceError) return "wrong audience";
  if (error instanceof JwtInvalidSignatureError) return "bad signature";
  if (error instanceof JwtInvalidSignatureAlgorithmError || error instanceof JwkInvalidKtyError) {
    return "signature algorithm not allowed";
  }
  if (error instanceof KidNotFoundInJwksError || error instanceof JwtWithoutValidKidError) {
    return "unknown signing key";
  }
  return "malformed token";
}

/** One line, on stderr so stdout stays one JSON line per request; the error names the URL, no secret. */
function reportFailedPrefetch(error: unknown): void {
  const detail = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    `${JSON.stringify({ level: "WARN", message: "prefetching the issuer's key set failed; requests fetch it", detail })}\n`,
  );
}
