/**
 * Tokens an attacker (or a misconfigured issuer) could present: signed with any key and any claims,
 * unsigned (`alg: none`), or HMAC-signed with the issuer's public key as the secret.
 */
import { createHash, generateKeyPair, type JsonWebKey, type KeyObject, randomUUID, sign } from "node:crypto";
import { promisify } from "node:util";
import { importJWK, type JWK, type JWTPayload, SignJWT } from "jose";
import { DEFAULT_REQUIRED_SCOPE } from "../../lambda/defaults.ts";
import { LOCAL_CLIENT_ID } from "../../local/token-issuer.ts";
import { TEST_ISSUER } from "../../support/harness.ts";

/**
 * node:crypto's generateKeyPair as a promise, the only way tests make keys. On Node 20, exporting a JWK of
 * a key from generateKeyPairSync deadlocks when a garbage collection during the export frees the job that
 * made the key: the job's destructor waits for the key's lock, which the export holds. The test file then
 * hangs in its import or a test, and no vitest timeout fires. biome.json refuses generateKeyPairSync.
 */
export const generateKeys = promisify(generateKeyPair);

/** The claims of a good access token, a minute old and valid for an hour, with `overrides` applied. */
export function accessTokenClaims(overrides: JWTPayload = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: TEST_ISSUER,
    sub: LOCAL_CLIENT_ID,
    client_id: LOCAL_CLIENT_ID,
    token_use: "access",
    scope: DEFAULT_REQUIRED_SCOPE,
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

/** A key an issuer publishes: its private half, and its public JWK as served (with or without `alg`). */
export interface PublishedKey {
  kid: string;
  /** `RSA`, or the curve of an EC or OKP key. */
  type: "RSA" | "P-256" | "P-384" | "P-521" | "Ed25519";
  /** The alg the key was made for, whether or not the JWK says it. */
  naturalAlg: string;
  publicJwk: JsonWebKey;
  privateKey: KeyObject;
}

const KEY_TYPES = [
  { type: "RSA", naturalAlg: "RS256", pair: () => generateKeys("rsa", { modulusLength: 2048 }) },
  { type: "P-256", naturalAlg: "ES256", pair: () => generateKeys("ec", { namedCurve: "P-256" }) },
  { type: "P-384", naturalAlg: "ES384", pair: () => generateKeys("ec", { namedCurve: "P-384" }) },
  { type: "P-521", naturalAlg: "ES512", pair: () => generateKeys("ec", { namedCurve: "P-521" }) },
  { type: "Ed25519", naturalAlg: "EdDSA", pair: () => generateKeys("ed25519") },
] as const;

/**
 * A key of every type a key set may hold, each published twice: with `alg` (as Cognito's) and
 * without (as Microsoft Entra ID's), under kids `<type>-alg` and `<type>-no-alg`: each verifies its tokens.
 */
export async function keysOfEveryType(): Promise<PublishedKey[]> {
  const keys = KEY_TYPES.map(async ({ type, naturalAlg, pair }) => {
    const { publicKey, privateKey } = await pair();
    const jwk = publicKey.export({ format: "jwk" });
    return [
      { kid: `${type}-alg`, publicJwk: { ...jwk, kid: `${type}-alg`, alg: naturalAlg, use: "sig" } },
      { kid: `${type}-no-alg`, publicJwk: { ...jwk, kid: `${type}-no-alg` } },
    ].map((published) => ({ ...published, type, naturalAlg, privateKey }));
  });
  return (await Promise.all(keys)).flat();
}

/**
 * The JWS signature of `signingInput` by `key` under `alg`, computed whatever the alg says the key
 * should be (ES384 with a P-256 key: what a forger would send), or undefined where node:crypto has
 * no such signature for the key (ES256 with an RSA key, PS256, HS256, none).
 */
export function jwsSignature(alg: string, key: KeyObject, signingInput: string): string | undefined {
  const data = Buffer.from(signingInput);
  const hash = `sha${alg.slice(2)}`;
  const keyType = key.asymmetricKeyType;
  if (/^RS(256|384|512)$/.test(alg) && keyType === "rsa") return base64url(sign(hash, data, key));
  if (/^ES(256|384|512)$/.test(alg) && keyType === "ec") {
    return base64url(sign(hash, data, { key, dsaEncoding: "ieee-p1363" }));
  }
  if (alg === "EdDSA" && keyType === "ed25519") return base64url(sign(null, data, key));
  return undefined;
}

/** The signing input of a compact JWS over exactly this header and these claims, unchecked. */
export function signingInput(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  return `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
}

/** EMSA-PKCS1-v1_5 of SHA-256(input) (RFC 8017 §9.2): the "signature" an RSA key with e = 1 accepts. */
export function pkcs1Encoding(input: string, modulusBytes: number): Buffer {
  const digestInfo = Buffer.concat([
    Buffer.from("3031300d060960864801650304020105000420", "hex"),
    createHash("sha256").update(input).digest(),
  ]);
  const padding = Buffer.alloc(modulusBytes - digestInfo.length - 3, 0xff);
  return Buffer.concat([Buffer.from([0, 1]), padding, Buffer.from([0]), digestInfo]);
}

/** A key an issuer should never publish, and the signature a forger would send for a token naming it. */
export interface WeakKey {
  kid: string;
  alg: string;
  publicJwk: JsonWebKey;
  forge(signingInput: string): Buffer;
}

/**
 * One RSA key of each weakness: moduli of 512 and 1024 bits (forged with their private keys, as anyone
 * could factor them), e = 1 (the signature is the padded digest itself), an exponent of 3,064 bits.
 */
export async function weakKeys(): Promise<WeakKey[]> {
  const rsaKey = (bits: number) => generateKeys("rsa", { modulusLength: bits });
  const signedBy = (key: KeyObject) => (input: string) => sign("sha256", Buffer.from(input), key);
  const [rsa512, rsa1024, rsa2048] = await Promise.all([rsaKey(512), rsaKey(1024), rsaKey(2048)]);
  const modulus = rsa2048.publicKey.export({ format: "jwk" }).n;
  return [
    {
      kid: "rsa-512",
      alg: "RS256",
      publicJwk: { ...rsa512.publicKey.export({ format: "jwk" }), kid: "rsa-512" },
      forge: signedBy(rsa512.privateKey),
    },
    {
      kid: "rsa-1024",
      alg: "RS256",
      publicJwk: { ...rsa1024.publicKey.export({ format: "jwk" }), kid: "rsa-1024" },
      forge: signedBy(rsa1024.privateKey),
    },
    {
      kid: "rsa-e1",
      alg: "RS256",
      publicJwk: { kty: "RSA", n: modulus, e: "AQ", kid: "rsa-e1" },
      forge: (input) => pkcs1Encoding(input, 256),
    },
    {
      kid: "rsa-huge-e",
      alg: "RS256",
      publicJwk: { kty: "RSA", n: modulus, e: base64url(Buffer.alloc(383, 0xff)), kid: "rsa-huge-e" },
      forge: signedBy(rsa2048.privateKey),
    },
  ];
}
