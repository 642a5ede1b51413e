import { type Clock, systemClock } from "../clock.ts";
import { InvalidTokenError } from "../errors.ts";
import { logWarning } from "../log.ts";
import { bearerToken } from "./bearer-credentials.ts";
import { decodeCompactJws } from "./compact-jws.ts";
import { refuseCriticalExtensions } from "./critical-extensions.ts";
import { IssuerKeyCache } from "./issuer-key-cache.ts";
import { UNKNOWN_SIGNING_KEY } from "./json-web-keys.ts";
import { createJwksFetcher, type KeySetFetcher, type KeySetFetchObserver } from "./jwks-fetcher.ts";
import { allowedAlgorithm } from "./key-algorithms.ts";
import { signatureIsValid } from "./signatures.ts";
import { refuseUncheckableClaims } from "./unverified-claims.ts";
import { type ClaimsPolicy, checkVerifiedClaims } from "./verified-claims.ts";

export interface TokenPolicy extends ClaimsPolicy {
  issuer: string;
  jwksUrl: string;
}

export interface Caller {
  subject: string;
  clientId: string | undefined;
}

export type Authenticate = (authorizationHeader: string | undefined) => Promise<Caller>;

export interface AuthenticatorOptions {
  /**
   * Start fetching the issuer's key set now, so that the first request finds it fetched (and its keys
   * imported) or under way. A failed prefetch writes one line to stderr and nothing else: the first
   * request needing a key fetches again.
   */
  prefetchKeys?: boolean;
  /**
   * The time a token's exp and nbf are judged at, the key set's refetch window runs on and a key-set
   * fetch times out by; tests move it instead of waiting.
   */
  clock?: Clock;
  /** How the key set is downloaded; tests wrap createJwksFetcher to count fetches. */
  fetcher?: KeySetFetcher;
  /** Told of each key-set fetch the default fetcher makes (tracing); unused when `fetcher` is given. */
  observeKeySetFetch?: KeySetFetchObserver;
}

export const JWKS_RESPONSE_TIMEOUT_MS = 1000;
/**
 * After a key-set fetch that did not yield the key a token names (the key is not there, or the
 * issuer failed), the key set is not fetched again for this long.
 */
export const KEY_SET_REFETCH_INTERVAL_SECONDS = 10;

/**
 * Builds the bearer-token check: a JWS in compact serialization, signed with RS256/384/512,
 * ES256/384/512 or EdDSA by a key of the issuer's key set, verified on node:crypto. In order, each
 * failure a 401 invalid_token unless said otherwise:
 * 1. the token's form (compact-jws.ts), `crit` (critical-extensions.ts), and its unverified claims,
 *    `iss` first (unverified-claims.ts);
 * 2. its `alg`, one of the list above (key-algorithms.ts): `none`, HS* or PS* are refused before any key
 *    is looked up;
 * 3. the key its `kid` names, from the issuer's key set (IssuerKeyCache: fetched when needed, 503 when
 *    the issuer fails), the one of that kid whose type and curve fit the alg (key-set.ts); a key of the
 *    set that is malformed or weak (key-strength.ts) was left out when the set arrived and is never used;
 * 4. the signature;
 * 5. the verified claims: time window, audience, client, and scope (403) (verified-claims.ts).
 * The key set lives as long as the function instance: nothing is kept per token, kid or claimed issuer.
 */
export function createAuthenticator(policy: TokenPolicy, options: AuthenticatorOptions = {}): Authenticate {
  const clock = options.clock ?? systemClock;
  const keys = new IssuerKeyCache({
    jwksUrl: policy.jwksUrl,
    fetcher:
      options.fetcher ?? createJwksFetcher(JWKS_RESPONSE_TIMEOUT_MS, clock, options.observeKeySetFetch),
    refetchIntervalSeconds: KEY_SET_REFETCH_INTERVAL_SECONDS,
    clock,
  });
  if (options.prefetchKeys) keys.fetchKeySet().catch(reportFailedPrefetch);

  return async (authorizationHeader) => {
    const { header, payload, signingInput, signature } = decodeCompactJws(bearerToken(authorizationHeader));
    refuseCriticalExtensions(header);
    refuseUncheckableClaims(payload, policy.issuer);
    const algorithm = allowedAlgorithm(header.alg);
    if (typeof header.kid !== "string") throw new InvalidTokenError(UNKNOWN_SIGNING_KEY);

    const { type, key } = await keys.signingKey(header.kid, algorithm);
    const signatureLength = algorithm.keys.get(type);
    if (!signatureIsValid(algorithm, signatureLength, key, signingInput, signature)) {
      throw new InvalidTokenError("the token is invalid: bad signature");
    }

    checkVerifiedClaims(payload, policy, clock.now() / 1000);
    return {
      subject: typeof payload.sub === "string" ? payload.sub : "",
      clientId: typeof payload.client_id === "string" ? payload.client_id : undefined,
    };
  };
}

/** One line, on stderr so stdout stays one JSON line per request; the error names the URL, no secret. */
function reportFailedPrefetch(error: unknown): void {
  const detail = error instanceof Error ? error.message : String(error);
  logWarning("prefetching the issuer's key set failed; requests fetch it", { detail });
}
