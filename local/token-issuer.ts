/**
 * A token issuer for local runs and tests: a signing key (RS256 unless another alg is asked for: ES256,
 * EdDSA, ...), its public JWKS, and access tokens shaped
 * like the stack's Cognito client-credentials tokens (`scope`, `client_id`, `exp`).
 */
import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import { DEFAULT_REQUIRED_SCOPE } from "../lambda/defaults.ts";

export const LOCAL_CLIENT_ID = "plant-store-local";

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

/** A new private signing key of `alg` as a JWK (with `kid` and `alg`), suitable for storing. */
export async function generateSigningKey(alg = "RS256"): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: randomUUID(), alg, use: "sig" };
}

export async function createTokenIssuer(issuer: string, privateJwk: JWK): Promise<TokenIssuer> {
  const alg = privateJwk.alg ?? "RS256";
  const privateKey = await importJWK(privateJwk, alg);
  const { kty, n, e, crv, x, y, kid, use } = privateJwk;
  const publicJwk = JSON.parse(JSON.stringify({ kty, n, e, crv, x, y, kid, alg, use })) as JWK;
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
        .setProtectedHeader({ alg, kid: publicJwk.kid ?? "", typ: "JWT" })
        .setIssuer(issuer)
        .setSubject(options.subject ?? LOCAL_CLIENT_ID)
        .setIssuedAt(now)
        .setExpirationTime(now + (options.expiresInSeconds ?? 3600))
        .setJti(randomUUID())
        .sign(privateKey);
    },
  };
}
