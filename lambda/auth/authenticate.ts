import { systemClock } from "../clock.ts";
import { bearerToken } from "./bearer-credentials.ts";
import { type ClaimsPolicy, checkClaimsAfterSignature, checkClaimsBeforeKeyLookup } from "./claims.ts";
import { createIssuerKeys, type IssuerKeys, type IssuerKeysOptions } from "./issuer-keys.ts";
import {
  decodeCompactJws,
  headerAlgorithm,
  invalidToken,
  signatureIsValid,
  UNKNOWN_SIGNING_KEY,
} from "./jws.ts";

/** The issuer's tokens this API takes; the scope is each route's (lambda/http/routes.ts). */
export interface TokenPolicy extends Omit<ClaimsPolicy, "requiredScope"> {
  jwksUrl: string;
}

export interface Caller {
  subject: string;
  clientId: string | undefined;
}

export type Authenticate = (
  authorizationHeader: string | undefined,
  requiredScope: string,
) => Promise<Caller>;

/** The issuer's keys, or the options createIssuerKeys builds them with; the clock the system's when not given. */
export interface AuthenticatorOptions extends IssuerKeysOptions {
  /** The issuer's keys (productionDependencies builds them, to refresh them after answers). */
  keys?: IssuerKeys;
}

/**
 * The bearer-token check, top to bottom; each failure a 401 invalid_token unless said otherwise:
 * 1. the Authorization header's one Bearer token (400 or a bare 401 otherwise, bearer-credentials.ts);
 * 2. its form, a JWS in compact serialization, and its header: no `crit`, an `alg` of RS256, RS384 or
 *    RS512 only: never `none`, HS*, PS*, ES* or EdDSA (jws.ts);
 * 3. the claims worth checking before any key is looked up: `iss` first, the registered claims' types
 *    and ranges (claims.ts);
 * 4. the key its `kid` names, from the issuer's keys (issuer-keys.ts: delivered at deploy time or
 *    fetched, refreshed in the background; 503 when the issuer fails), the RSA key of that kid; a
 *    malformed, private, weak or non-RSA key was left out when its set arrived (key-set.ts);
 * 5. the signature, on node:crypto (jws.ts);
 * 6. the verified claims: time window, audience, client, and scope (403) (claims.ts).
 */
export function createAuthenticator(policy: TokenPolicy, options: AuthenticatorOptions = {}): Authenticate {
  const clock = options.clock ?? systemClock;
  const keys = options.keys ?? createIssuerKeys(policy, options);

  return async (authorizationHeader, requiredScope) => {
    const token = decodeCompactJws(bearerToken(authorizationHeader));
    const algorithm = headerAlgorithm(token.header);
    checkClaimsBeforeKeyLookup(token.payload, { ...policy, requiredScope });
    if (typeof token.header.kid !== "string") throw invalidToken(UNKNOWN_SIGNING_KEY);

    const key = await keys.signingKey(token.header.kid, algorithm);
    if (!signatureIsValid(algorithm, key, token)) throw invalidToken("bad signature");

    checkClaimsAfterSignature(token.payload, { ...policy, requiredScope }, clock.now() / 1000);
    const { sub, client_id } = token.payload;
    return {
      subject: typeof sub === "string" ? sub : "",
      clientId: typeof client_id === "string" ? client_id : undefined,
    };
  };
}
