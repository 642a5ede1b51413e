/**
 * Tokens an attacker (or a misconfigured issuer) could present: signed with any key and any claims,
 * unsigned (`alg: none`), or HMAC-signed with the issuer's public key as the secret.
 */
import { createPrivateKey, randomUUID, sign } from "node:crypto";
import { importJWK, type JWK, type JWTPayload, SignJWT } from "jose";
import { DEFAULT_SCOPE, LOCAL_CLIENT_ID } from "../../local/token-issuer.ts";
import { TEST_ISSUER } from "../../support/harness.ts";

/** The claims of a good access token, a minute old and valid for an hour, with `overrides` applied. */
export function accessTokenClaims(overrides: JWTPayload = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: TEST_ISSUER,
    sub: LOCAL_CLIENT_ID,
    client_id: LOCAL_CLIENT_ID,
    token_use: "access",
    scope: DEFAULT_SCOPE,
    iat: now - 60,
    exp: now + 3600,
    jti: randomUUID(),
    ...overrides,
  };
}

/** Signs `claims` with an RS256 private JWK; `header` may replace the `kid` or add fields. */
export async function signToken(
  privateJwk: JWK,
  claims: JWTPayload,
  header: Record<string, unknown> = {},
): Promise<string> {
  const key = await importJWK(privateJwk, "RS256");
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", kid: privateJwk.kid, typ: "JWT", ...header })
    .sign(key);
}

/**
 * Signs `claims` with an RS256 private JWK under exactly `{alg, kid, typ, ...header}`, without jose's
 * header checks: it refuses to produce a `crit` it does not implement, which an issuer still may.
 */
export function signWithRawHeader(
  privateJwk: JWK,
  claims: JWTPayload,
  header: Record<string, unknown>,
): string {
  const signingInput = `${base64url(JSON.stringify({ alg: "RS256", kid: privateJwk.kid, typ: "JWT", ...header }))}.${base64url(JSON.stringify(claims))}`;
  const key = createPrivateKey({ key: privateJwk as import("node:crypto").JsonWebKey, format: "jwk" });
  return `${signingInput}.${base64url(sign("RSA-SHA256", Buffer.from(signingInput), key))}`;
}

export function base64url(value: string | Uint8Array): string {
  return Buffer.from(value).toString("base64url");
}

/** An unsecured JWT (RFC 7519 section 6): `alg: none` and an empty signature. */
export function unsignedToken(header: Record<string, unknown>, claims: JWTPayload): string {
  return `${base64url(JSON.stringify({ alg: "none", typ: "JWT", ...header }))}.${base64url(JSON.stringify(claims))}.`;
}

/** An HS256 token whose HMAC secret is `secret`: the algorithm-confusion attack when it is a public key. */
export async function hmacToken(
  secret: Uint8Array,
  header: Record<string, unknown>,
  claims: JWTPayload,
): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ typ: "JWT", ...header, alg: "HS256" }).sign(secret);
}

/** The three segments of a compact JWT. */
export function segments(token: string): { header: string; payload: string; signature: string } {
  const [header = "", payload = "", signature = ""] = token.split(".");
  return { header, payload, signature };
}
