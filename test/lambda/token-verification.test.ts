/**
 * The token verifier's own rules (lambda/auth/), each against a real loopback key set and tokens signed
 * by real keys of every type: the compact form (strict base64url, JSON objects), the alg allow list
 * (RS256, RS384 and RS512 only: a well-signed ES* or EdDSA token is refused, and an EC or OKP key left
 * out) and how an alg must fit its key (the key's own `alg`, `use`, `key_ops`), the signature's exact
 * length, the time window with its 5 s leeway, and the audience. Each failure is asserted as the caller
 * sees it: the status and the message of the answer. The authenticator's clock stands still, so that a
 * claim at the edge of the leeway is judged at the second it was written for, however slow the machine.
 */
import { constants, generateKeyPairSync, type JsonWebKey, sign } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Authenticate, createAuthenticator, type TokenPolicy } from "../../lambda/auth/authenticate.ts";
import { MAX_KEYS_IN_KEY_SET } from "../../lambda/auth/key-set.ts";
import { ApiError } from "../../lambda/errors.ts";
import { LOCAL_CLIENT_ID } from "../../local/token-issuer.ts";
import { TEST_ISSUER } from "../../support/harness.ts";
import { type JwksServer, startJwksServer } from "../../support/jwks-server.ts";
import { FakeClock } from "../support/fake-clock.ts";
import {
  accessTokenClaims,
  base64url,
  jwsSignature,
  keysOfEveryType,
  type PublishedKey,
  signingInput,
} from "../support/forged-tokens.ts";

const ed448 = generateKeyPairSync("ed448");
const ED448_KID = "Ed448-no-alg";

let keys: PublishedKey[];
let jwks: JwksServer;
let authenticate: Authenticate;
const clock = new FakeClock({ now: Date.now() });

function policy(overrides: Partial<TokenPolicy> = {}): TokenPolicy {
  return {
    issuer: TEST_ISSUER,
    jwksUrl: jwks.url,
    audiences: [],
    clientIds: [LOCAL_CLIENT_ID],
    ...overrides,
  };
}

beforeAll(async () => {
  keys = keysOfEveryType();
  const extra: JsonWebKey[] = [
    { ...ed448.publicKey.export({ format: "jwk" }), kid: ED448_KID },
    { ...keyOf("RSA-no-alg").publicJwk, kid: "RSA-for-encryption", use: "enc" },
    { ...keyOf("RSA-no-alg").publicJwk, kid: "RSA-verify-only", key_ops: ["verify"] },
    { ...keyOf("RSA-no-alg").publicJwk, kid: "RSA-RS384-only", alg: "RS384" },
  ];
  jwks = await startJwksServer({ keys: [...keys.map((key) => key.publicJwk), ...extra] });
  authenticate = createAuthenticator(policy(), { clock });
});

afterAll(async () => {
  await jwks.close();
});

function keyOf(kid: string): PublishedKey {
  const key = keys.find((candidate) => candidate.kid === kid);
  if (key === undefined) throw new Error(`no key ${kid}`);
  return key;
}

/** A token over exactly this header and these claims, signed by `kid`'s private key under `alg`. */
function token(
  kid: string,
  alg: string,
  claims: Record<string, unknown> = accessTokenClaims(),
  header: object = {},
): string {
  const input = signingInput({ alg, kid, ...header }, claims);
  const privateKey =
    kid === ED448_KID ? ed448.privateKey : keyOf(kid.replace(/^RSA-.*/, "RSA-no-alg")).privateKey;
  const signature =
    kid === ED448_KID
      ? base64url(sign(null, Buffer.from(input), privateKey))
      : jwsSignature(alg, privateKey, input);
  if (signature === undefined) throw new Error(`node:crypto has no ${alg} signature for ${kid}`);
  return `${input}.${signature}`;
}

/** A good access token's claims with `overrides`, of any type (undefined drops a claim). */
function claimsWith(overrides: Record<string, unknown>): Record<string, unknown> {
  return { ...accessTokenClaims(), ...overrides };
}

/** What the caller is answered: the status and message of the failure (200 when none). */
async function answer(jwt: string, check: Authenticate = authenticate): Promise<[number, string]> {
  try {
    await check(`Bearer ${jwt}`, "plants/write");
    return [200, ""];
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return [error.status, error.message];
  }
}

const MALFORMED: [number, string] = [401, "the token is invalid: malformed token"];
const ALG_NOT_ALLOWED: [number, string] = [401, "the token is invalid: signature algorithm not allowed"];
const BAD_SIGNATURE: [number, string] = [401, "the token is invalid: bad signature"];
const NOT_RSA: [number, string] = [
  401,
  "the token is invalid: the issuer's key it names cannot be used: its kty is not RSA: this API verifies RS256, RS384 and RS512 tokens",
];

describe("every key type, with and without alg on the key", () => {
  test("verifies RS256 under the RSA key's own alg; refuses ES256/384/512 and EdDSA (Ed25519, Ed448)", async () => {
    for (const key of keys) {
      const expected = key.type === "RSA" ? [200, ""] : ALG_NOT_ALLOWED;
      expect(await answer(token(key.kid, key.naturalAlg)), key.kid).toEqual(expected);
    }
    expect(await answer(token(ED448_KID, "EdDSA"))).toEqual(ALG_NOT_ALLOWED);
  });

  test("an RS256 token naming an EC or OKP key is told the key is left out, as it is not RSA", async () => {
    const rsa = keyOf("RSA-no-alg").privateKey;
    for (const kid of [...keys.filter((key) => key.type !== "RSA").map((key) => key.kid), ED448_KID]) {
      const input = signingInput({ alg: "RS256", kid }, accessTokenClaims());
      expect(await answer(`${input}.${jwsSignature("RS256", rsa, input)}`), kid).toEqual(NOT_RSA);
    }
  });

  test("an RSA key without alg verifies RS384 and RS512 too", async () => {
    for (const alg of ["RS384", "RS512"]) expect(await answer(token("RSA-no-alg", alg))).toEqual([200, ""]);
  });
});

describe("the compact form", () => {
  const good = () => token("RSA-alg", "RS256");

  test("padding, characters outside base64url, or a stray bit in a last character: malformed", async () => {
    const [header = "", payload = "", signature = ""] = good().split(".");
    // A 2048-bit RSA signature is 256 bytes: 342 characters, the last carrying 4 unused bits.
    expect(signature.length % 4).toBe(2);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(signature.at(-1) ?? "");
    const strayBit = `${signature.slice(0, -1)}${alphabet[last | 1]}`;
    for (const tampered of [
      `${header}.${payload}.${signature}==`,
      `${header}.${payload}.${signature.slice(0, 10)}+${signature.slice(11)}`,
      `${header}.${payload}.${signature.slice(0, 10)}/${signature.slice(11)}`,
      `${header}.${payload}.${strayBit}`,
      `${header}.${payload}.${signature.slice(0, 341)}`,
    ]) {
      expect(await answer(tampered), tampered.slice(-12)).toEqual(MALFORMED);
    }
  });

  test("two or four segments, an empty one, or a JWE's five: malformed", async () => {
    const [header = "", payload = "", signature = ""] = good().split(".");
    for (const tampered of [
      `${header}.${payload}`,
      `${header}.${payload}.${signature}.${signature}`,
      `${header}.${payload}.`,
      `.${payload}.${signature}`,
      `${header}..${signature}`,
      `${header}.${payload}.${signature}.${payload}.${signature}`,
    ]) {
      expect(await answer(tampered)).toEqual(MALFORMED);
    }
  });

  test("a header or payload that is not a JSON object in UTF-8: malformed", async () => {
    const signature = good().split(".")[2] ?? "";
    const header = base64url(JSON.stringify({ alg: "RS256", kid: "RSA-alg" }));
    const payload = base64url(JSON.stringify(accessTokenClaims()));
    for (const [first, second] of [
      [base64url("[]"), payload],
      [base64url("null"), payload],
      [base64url('"RS256"'), payload],
      [header, base64url("[1]")],
      [header, base64url("42")],
      [header, base64url("{not json")],
      [header, base64url(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))], // {"\xff":1}
      [base64url(`\ufeff${JSON.stringify({ alg: "RS256", kid: "RSA-alg" })}`), payload],
    ]) {
      expect(await answer(`${first}.${second}.${signature}`)).toEqual(MALFORMED);
    }
  });

  test("registered claims of the wrong type are malformed, however well signed", async () => {
    for (const overrides of [
      { exp: "9999999999" },
      { nbf: null },
      { iat: true },
      { sub: 7 },
      { scope: ["plants/write"] },
      { aud: [1] },
      { jti: {} },
    ]) {
      expect(
        await answer(token("RSA-alg", "RS256", claimsWith(overrides))),
        JSON.stringify(overrides),
      ).toEqual(MALFORMED);
    }
  });
});

describe("the alg and the key", () => {
  test("none, HS*, PS*, ES*, EdDSA and unknown algs are refused before any key is fetched", async () => {
    const fetches = jwks.fetches();
    const claims = accessTokenClaims();
    const rsa = keyOf("RSA-no-alg");
    const refused = ["none", "HS256", "PS256", "ES256", "ES384", "ES512", "EdDSA", "ES256K", "rs256"];
    for (const alg of [...refused, "constructor", "__proto__", ""]) {
      const input = signingInput({ alg, kid: `never-published-${alg}` }, claims);
      expect(
        await answer(`${input}.${base64url(sign("sha256", Buffer.from(input), rsa.privateKey))}`),
        alg,
      ).toEqual(ALG_NOT_ALLOWED);
    }
    const withoutAlg = signingInput({ kid: "RSA-no-alg" }, claims);
    expect(await answer(`${withoutAlg}.${base64url("signature")}`)).toEqual(ALG_NOT_ALLOWED);
    expect(jwks.fetches()).toBe(fetches);
  });

  test("a PS256 signature by the issuer's RSA key is refused: PS* is not on the list", async () => {
    const input = signingInput({ alg: "PS256", kid: "RSA-no-alg" }, accessTokenClaims());
    const { privateKey } = keyOf("RSA-no-alg");
    const pss = sign("sha256", Buffer.from(input), {
      key: privateKey,
      padding: constants.RSA_PKCS1_PSS_PADDING,
    });
    expect(await answer(`${input}.${base64url(pss)}`)).toEqual(ALG_NOT_ALLOWED);
  });

  test("a key whose own alg differs from the token's refuses it, even one its type fits", async () => {
    expect(await answer(token("RSA-alg", "RS384"))).toEqual(ALG_NOT_ALLOWED);
    expect(await answer(token("RSA-RS384-only", "RS256"))).toEqual(ALG_NOT_ALLOWED);
    expect(await answer(token("RSA-RS384-only", "RS384"))).toEqual([200, ""]);
  });

  test("a key published for encryption (use: enc) verifies nothing; key_ops with verify does", async () => {
    expect(await answer(token("RSA-for-encryption", "RS256"))).toEqual([
      401,
      "the token is invalid: unknown signing key",
    ]);
    expect(await answer(token("RSA-verify-only", "RS256"))).toEqual([200, ""]);
  });

  test("a kid that is not a string names no key", async () => {
    const input = signingInput({ alg: "RS256", kid: 7 }, accessTokenClaims());
    expect(await answer(`${input}.${base64url("signature")}`)).toEqual([
      401,
      "the token is invalid: unknown signing key",
    ]);
  });
});

describe("the signature", () => {
  test("an RSA signature not as long as the modulus, or over other bytes: bad signature", async () => {
    const good = token("RSA-alg", "RS256");
    const [header, payload, signature = ""] = good.split(".");
    const bytes = Buffer.from(signature, "base64url");
    for (const tampered of [
      bytes.subarray(1),
      Buffer.concat([Buffer.from([0]), bytes]),
      Buffer.alloc(bytes.length),
    ]) {
      expect(await answer(`${header}.${payload}.${base64url(tampered)}`)).toEqual(BAD_SIGNATURE);
    }
    const otherPayload = base64url(JSON.stringify(accessTokenClaims({ scope: "plants/write plants/admin" })));
    expect(await answer(`${header}.${otherPayload}.${signature}`)).toEqual(BAD_SIGNATURE);
  });

  test("a bad signature on an expired token says bad signature: claims are judged once it is verified", async () => {
    const now = Math.floor(clock.now() / 1000);
    const expired = token("RSA-alg", "RS256", accessTokenClaims({ exp: now - 3600 }));
    expect(
      await answer(`${expired.slice(0, expired.lastIndexOf("."))}.${base64url(Buffer.alloc(256))}`),
    ).toEqual(BAD_SIGNATURE);
    expect(await answer(expired)).toEqual([401, "the token has expired"]);
  });
});

describe("the time window and the audience", () => {
  test("exp and nbf are judged with 5 s of leeway either way", async () => {
    const now = Math.floor(clock.now() / 1000);
    const at = (overrides: Record<string, unknown>) =>
      answer(token("RSA-alg", "RS256", claimsWith(overrides)));
    expect(await at({ exp: now - 3 })).toEqual([200, ""]);
    expect(await at({ exp: now - 30 })).toEqual([401, "the token has expired"]);
    expect(await at({ nbf: now + 3 })).toEqual([200, ""]);
    expect(await at({ nbf: now + 30 })).toEqual([401, "the token is not valid yet"]);
    expect(await at({ exp: undefined })).toEqual([401, "the token has no expiry (exp)"]);
  });

  test("with audiences configured, aud as a string or a list must name one of them", async () => {
    const check = createAuthenticator(policy({ audiences: ["plant-store-api", "other-api"] }));
    const withAud = (aud: unknown) => answer(token("RSA-alg", "RS256", claimsWith({ aud })), check);
    expect(await withAud("plant-store-api")).toEqual([200, ""]);
    expect(await withAud(["unrelated", "other-api"])).toEqual([200, ""]);
    for (const aud of ["unrelated", [], ["unrelated"], undefined]) {
      expect(await withAud(aud)).toEqual([401, "the token is invalid: wrong audience"]);
    }
  });
});

describe("the key set's size", () => {
  test(`a key set of more than ${MAX_KEYS_IN_KEY_SET} keys is the issuer's fault (503), and none of it is kept`, async () => {
    const rsa = keyOf("RSA-no-alg").publicJwk;
    const server = await startJwksServer({
      keys: Array.from({ length: MAX_KEYS_IN_KEY_SET + 1 }, (_, index) => ({ ...rsa, kid: `many-${index}` })),
    });
    try {
      const check = createAuthenticator(policy({ jwksUrl: server.url }));
      const [status, message] = await answer(token("RSA-no-alg", "RS256"), check);
      expect([status, message]).toEqual([
        503,
        "the token issuer's key set was fetched but is not a key set this API can take",
      ]);

      server.setKeys({
        keys: [
          rsa,
          ...Array.from({ length: MAX_KEYS_IN_KEY_SET - 1 }, (_, index) => ({ ...rsa, kid: `few-${index}` })),
        ],
      });
      const atMost = createAuthenticator(policy({ jwksUrl: server.url }));
      expect((await answer(token("RSA-no-alg", "RS256"), atMost))[0]).toBe(200);
    } finally {
      await server.close();
    }
  });
});
