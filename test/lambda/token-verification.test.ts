/**
 * The token check as a caller meets it, through the production handler (aws-jwt-verify and what this API
 * adds before and after it) against a loopback key set holding keys of every type: which tokens get 200,
 * and for each refusal the status, challenge and message. Forgeries are signed for real: by another key, by
 * the issuer's key under an alg that does not fit it, or HMAC-signed with the public key as the secret.
 */
import { constants, createHmac, sign } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { createTokenIssuer, generateSigningKey, LOCAL_CLIENT_ID } from "../../local/token-issuer.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { type Harness, startHarness, TEST_ISSUER } from "../../support/harness.ts";
import { expectBearerChallenge, expectErrorAnswer } from "../support/answers.ts";
import {
  accessTokenClaims,
  base64url,
  generateKeys,
  jwsSignature,
  keysOfEveryType,
  type PublishedKey,
  signingInput,
  unsignedToken,
} from "../support/forged-tokens.ts";

const AUDIENCE = "plant-store-api";
let harness: Harness;
let keys: PublishedKey[];
let nextId = 1;

beforeAll(async () => {
  keys = await keysOfEveryType();
  harness = await startHarness({ JWT_AUDIENCE: `${AUDIENCE},other-api` });
  harness.jwks.setKeys({ keys: keys.map((key) => key.publicJwk) });
});

afterAll(async () => {
  await harness.close();
});

const answer = (token: string): Promise<ApiGatewayResult> =>
  harness.handler(apiGatewayEvent("2.0", { token, body: `{"id":${nextId++},"name":"Fern"}` }));

const keyNamed = (kid: string): PublishedKey => {
  const key = keys.find((candidate) => candidate.kid === kid);
  if (key === undefined) throw new Error(`no key ${kid}`);
  return key;
};

/** The answer to a token of the RSA-alg key under RS256, over these claims and header. */
const byRsa = (claims = {}, header = {}) => answer(token("RSA-alg", "RS256", claims, header));

/** A token over exactly `header` and `claims` (good ones by default), signed by `kid`'s key under `alg`. */
function token(kid: string, alg: string, claims = {}, header = {}): string {
  const key = keyNamed(kid);
  const input = signingInput(
    { alg, kid, typ: "JWT", ...header },
    accessTokenClaims({ aud: AUDIENCE, ...claims }),
  );
  return `${input}.${jwsSignature(alg, key.privateKey, input) ?? ""}`;
}

async function expectRefused(result: Promise<ApiGatewayResult>, message: RegExp | string, status = 401) {
  const answered = await result;
  expect(expectErrorAnswer(answered, status).message).toMatch(message);
  expectBearerChallenge(answered, status === 401 ? "invalid_token" : "insufficient_scope");
}

describe("the algorithms aws-jwt-verify verifies, each from the issuer's published key set", () => {
  // Each alg of each key type, with an alg member and without: the control share of hostile-tokens.test.ts.
  test.each(["ES256", "EdDSA"])(
    "a %s token the token issuer mints from its published key set: 200",
    async (alg) => {
      const issuer = await createTokenIssuer(TEST_ISSUER, await generateSigningKey(alg));
      harness.jwks.setKeys({ keys: [...keys.map((key) => key.publicJwk), ...issuer.jwks.keys] });
      expect((await answer(await issuer.mint({ extraClaims: { aud: AUDIENCE } }))).statusCode).toBe(200);
    },
  );
});

describe("forgeries: 401 invalid_token, the reason named", () => {
  test("alg none, with no signature or a real one pasted on", async () => {
    await expectRefused(answer(unsignedToken({ kid: "RSA-alg" }, accessTokenClaims())), "malformed token");
    const pasted = `${unsignedToken({ kid: "RSA-alg" }, accessTokenClaims())}${token("RSA-alg", "RS256").split(".")[2]}`;
    await expectRefused(answer(pasted), "signature algorithm not allowed");
  });

  test("HS256 with the issuer's public key as the HMAC secret; PS256 by the issuer's RSA key", async () => {
    const rsa = keyNamed("RSA-no-alg");
    const input = signingInput({ alg: "HS256", kid: rsa.kid }, accessTokenClaims({ aud: AUDIENCE }));
    const hmac = createHmac("sha256", JSON.stringify(rsa.publicJwk)).update(input).digest();
    await expectRefused(answer(`${input}.${base64url(hmac)}`), "signature algorithm not allowed");
    const psInput = signingInput({ alg: "PS256", kid: rsa.kid }, accessTokenClaims({ aud: AUDIENCE }));
    const pss = sign("sha256", Buffer.from(psInput), {
      key: rsa.privateKey,
      padding: constants.RSA_PKCS1_PSS_PADDING,
    });
    await expectRefused(answer(`${psInput}.${base64url(pss)}`), "signature algorithm not allowed");
  });

  test("an alg that does not fit the key it names, though that key signed it", async () => {
    // aws-jwt-verify would take these (it verifies ES384 with a P-256 key, RS256 with an EC one).
    for (const [kid, alg] of [
      ["P-256-no-alg", "ES384"],
      ["P-256-no-alg", "RS256"],
      ["RSA-no-alg", "ES256"],
      ["RSA-no-alg", "EdDSA"],
      ["Ed25519-no-alg", "RS256"],
      ["RSA-alg", "RS384"],
    ] as const) {
      const forged = `${signingInput({ alg, kid }, accessTokenClaims({ aud: AUDIENCE }))}`;
      const { privateKey } = keyNamed(kid);
      const hash =
        alg === "EdDSA" || privateKey.asymmetricKeyType === "ed25519" ? null : `sha${alg.slice(2)}`;
      const signature = sign(hash, Buffer.from(forged), { key: privateKey, dsaEncoding: "ieee-p1363" });
      await expectRefused(answer(`${forged}.${base64url(signature)}`), "signature algorithm not allowed");
    }
  });

  test("another key under the issuer's kid, or a changed payload: bad signature", async () => {
    const attacker = (await generateKeys("rsa", { modulusLength: 2048 })).privateKey;
    const input = signingInput({ alg: "RS256", kid: "RSA-alg" }, accessTokenClaims({ aud: AUDIENCE }));
    await expectRefused(
      answer(`${input}.${base64url(sign("sha256", Buffer.from(input), attacker))}`),
      "bad signature",
    );
    const [header, , signature] = token("RSA-alg", "RS256").split(".");
    const payload = base64url(JSON.stringify(accessTokenClaims({ aud: AUDIENCE, sub: "admin" })));
    await expectRefused(answer(`${header}.${payload}.${signature}`), "bad signature");
  });

  test("a crit header the API does not implement (RFC 7515 §4.1.11), however well signed", async () => {
    await expectRefused(byRsa({}, { crit: ["b64"], b64: false }), /\(crit\)/);
  });

  test("no kid, a kid that is not a string, a kid never published", async () => {
    await expectRefused(byRsa({}, { kid: undefined }), "unknown signing key");
    await expectRefused(byRsa({}, { kid: 7 }), "malformed token");
    await expectRefused(byRsa({}, { kid: "never-published" }), "unknown signing key");
  });
});

describe("the form: aws-jwt-verify's decomposition", () => {
  test("not three base64url segments of JSON objects, a byte order mark, claims of the wrong type: malformed", async () => {
    const [header, payload, signature] = token("RSA-alg", "RS256").split(".");
    const bom = base64url(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(accessTokenClaims()))]),
    );
    for (const malformed of [
      `${header}.${payload}`,
      `${header}.${payload}.${signature}.${signature}`,
      `${header}..${signature}`,
      `${header}.${base64url("[1]")}.${signature}`,
      `${header}.${bom}.${signature}`,
      token("RSA-alg", "RS256", { sub: 5 }),
      token("RSA-alg", "RS256", { exp: "later" }),
      token("RSA-alg", "RS256", { aud: [5] }),
    ]) {
      await expectRefused(answer(malformed), "malformed token");
    }
  });

  test("padding on the signature: the same bytes, taken as aws-jwt-verify takes them", async () => {
    const [header, payload, signature] = token("RSA-alg", "RS256").split(".");
    expect((await answer(`${header}.${payload}.${signature}==`)).statusCode).toBe(200);
    // Padding inside the token is no RFC 6750 b64token: the Authorization header is malformed.
    expect((await answer(`${header}==.${payload}.${signature}`)).statusCode).toBe(400);
  });
});

describe("the claims", () => {
  test("issuer, expiry, not-before with 5 s of leeway, audience, client: each named", async () => {
    const now = Math.floor(Date.now() / 1000);
    await expectRefused(byRsa({ iss: `${TEST_ISSUER}/` }), "wrong issuer (iss)");
    await expectRefused(byRsa({ exp: now - 60 }), "the token is invalid: it has expired");
    expect((await byRsa({ exp: now - 2 })).statusCode).toBe(200);
    await expectRefused(byRsa({ exp: undefined }), "it has no expiry (exp)");
    await expectRefused(byRsa({ nbf: now + 60 }), "it is not valid yet");
    expect((await byRsa({ nbf: now + 2 })).statusCode).toBe(200);
    await expectRefused(byRsa({ aud: "another-api" }), "wrong audience (aud)");
    await expectRefused(byRsa({ aud: undefined }), "wrong audience (aud)");
    expect((await byRsa({ aud: ["x", "other-api"] })).statusCode).toBe(200);
    await expectRefused(byRsa({ client_id: "another" }), "another client (client_id)");
  });

  test("times beyond what a Date can hold are refused as out of range, never a 500", async () => {
    for (const [claim, seconds] of [
      ["exp", -1e300],
      ["exp", 8.64e12 + 1],
      ["nbf", 1e300],
    ] as const) {
      await expectRefused(byRsa({ [claim]: seconds }), `${claim} is out of range`);
    }
  });

  test("the route's scope, in scope or scp: else 403 insufficient_scope naming it", async () => {
    const result = byRsa({ scope: "plants/read" });
    await expectRefused(result, "the token lacks the scope 'plants/write'", 403);
    expect((await result).headers["www-authenticate"]).toContain('scope="plants/write"');
    for (const scp of [["plants/write"], "openid plants/write"]) {
      expect((await byRsa({ scope: undefined, scp })).statusCode).toBe(200);
    }
    expect(LOCAL_CLIENT_ID).toBe(accessTokenClaims().client_id);
  });
});
