/**
 * A token issuer for local runs and tests: an RS256 key, its public JWKS, and access tokens shaped
 * like the stack's Cognito client-credentials tokens (`scope`, `client_id`, `exp`).
 */
import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import { DEFAULT_REQUIRED_SCOPE } from "../lambda/defaults.ts";

export const LOCAL_CLIENT_ID = "plant-store-local";
const ALGORITHM = "RS256";

export interface MintOptions {
  scope?: string;
  /** Seconds from now; negative gives an already-expired token. */
  expiresInSeconds?: number;
  clientId?: string;
  subject?: string;
  extraClaims?: Record<string, unknown>;
}

export interface TokenIssuer {
  issuer: string;
  jwks: { keys: JWK[] };
  mint(options?: MintOptions): Promise<string>;
}

/** A new private signing key as a JWK (with `kid` and `alg`), suitable for storing. */
export async function generateSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(ALGORITHM, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: ALGORITHM, use: "sig" };
}

export async function createTokenIssuer(issuer: string, privateJwk: JWK): Promise<TokenIssuer> {
  const privateKey = await importJWK(privateJwk, ALGORITHM);
  const { kty, n, e, kid, alg, use } = privateJwk;
  const publicJwk: JWK = { kty, n, e, kid, alg, use };
  return {
    issuer,
    jwks: { keys: [publicJwk] },
    async mint(options = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        scope: options.scope ?? DEFAULT_REQUIRED_SCOPE,
        client_id: options.clientId ?? LOCAL_CLIENT_ID,
        token_use: "access",
        ...options.extraClaims,
      })
        .setProtectedHeader({ alg: ALGORITHM, kid: publicJwk.kid ?? "", typ: "JWT" })
        .setIssuer(issuer)
        .setSubject(options.subject ?? LOCAL_CLIENT_ID)
        .setIssuedAt(now)
        .setExpirationTime(now + (options.expiresInSeconds ?? 3600))
        .setJti(randomUUID())
        .sign(privateKey);
    },
  };
}
