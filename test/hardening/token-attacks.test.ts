/**
 * Token attacks, each against the production handler and a loopback JWKS: every forged, misissued
 * or stale token is refused with a 401 (or 403 for a missing scope) carrying an RFC 6750 challenge,
 * a malformed Authorization header with a 400 invalid_request, and an issuer that is unreachable or
 * answers something other than a key set fails closed with a 503 the caller can retry.
 */
import { createPublicKey } from "node:crypto";
import type { JWK } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { createTokenIssuer, generateSigningKey, type TokenIssuer } from "../../local/token-issuer.ts";
import { apiGatewayEvent, PAYLOAD_VERSIONS } from "../../support/events.ts";
import { type Harness, startHarness, TEST_ISSUER } from "../../support/harness.ts";
import { expectBearerChallenge, expectErrorAnswer, expectRetryAfter } from "../support/answers.ts";
import {
  accessTokenClaims,
  hmacToken,
  segments,
  signToken,
  signWithRawHeader,
  unsignedToken,
} from "../support/forged-tokens.ts";

let nextId = 1;

async function send(harness: Harness, token: string): Promise<ApiGatewayResult> {
  return harness.handler(apiGatewayEvent("2.0", { token, body: `{"id":${nextId++},"name":"Fern"}` }));
}

/** A refused token: the status, the challenge, and nothing of the token echoed back. */
function expectRefused(result: ApiGatewayResult, token: string, status = 401, error = "invalid_token"): void {
  expectErrorAnswer(result, status);
  expectBearerChallenge(result, error);
  const answer = JSON.stringify(result);
  expect(answer).not.toContain(token);
  for (const segment of Object.values(segments(token))) {
    if (segment.length > 8) expect(answer).not.toContain(segment);
  }
}

describe("forged and misissued tokens", () => {
  let harness: Harness;
  let signingKey: JWK;
  let trusted: TokenIssuer;
  let publicJwk: JWK;

  beforeAll(async () => {
    harness = await startHarness({ JWT_AUDIENCE: "" });
    // A key of the test's own, served as the issuer's, so the test can sign any claims with it.
    signingKey = await generateSigningKey();
    trusted = await createTokenIssuer(TEST_ISSUER, signingKey);
    harness.jwks.setKeys(trusted.jwks);
    publicJwk = trusted.jwks.keys[0] as JWK;
  });

  afterAll(async () => {
    await harness.close();
  });

  test("control: a token the issuer's key signed, with good claims, is accepted", async () => {
    const result = await send(harness, await signToken(signingKey, accessTokenClaims()));
    expect(result.statusCode).toBe(200);
    expect((await send(harness, await trusted.mint())).statusCode).toBe(200);
  });

  test("alg none (unsigned) is refused, whatever the header says", async () => {
    const good = await signToken(signingKey, accessTokenClaims());
    const forgeries = [
      unsignedToken({ kid: publicJwk.kid }, accessTokenClaims()),
      unsignedToken({}, accessTokenClaims()),
      unsignedToken({ kid: publicJwk.kid, alg: "None" }, accessTokenClaims()),
      // A real signature pasted onto an alg-none token.
      `${unsignedToken({ kid: publicJwk.kid }, accessTokenClaims())}${segments(good).signature}`,
    ];
    for (const token of forgeries) expectRefused(await send(harness, token), token);
  });

  test("HS256 signed with the issuer's public key as the HMAC secret is refused", async () => {
    const publicKey = createPublicKey({ key: publicJwk as import("node:crypto").JsonWebKey, format: "jwk" });
    const secrets = [
      Buffer.from(publicKey.export({ type: "spki", format: "pem" })),
      publicKey.export({ type: "spki", format: "der" }),
      Buffer.from(publicKey.export({ type: "pkcs1", format: "pem" })),
      Buffer.from(publicJwk.n ?? "", "base64url"),
      Buffer.from(JSON.stringify(publicJwk)),
    ];
    for (const secret of secrets) {
      for (const header of [{ kid: publicJwk.kid }, {}]) {
        const token = await hmacToken(secret, header, accessTokenClaims());
        expectRefused(await send(harness, token), token);
      }
    }
  });

  test("a token signed by another key under the issuer's kid is refused", async () => {
    const attackerKey = await generateSigningKey();
    const token = await signToken(attackerKey, accessTokenClaims(), { kid: publicJwk.kid });
    expectRefused(await send(harness, token), token);
  });

  test("a wrong issuer is refused", async () => {
    for (const iss of [
      "https://evil.example",
      `${TEST_ISSUER}/`,
      "https://issuer.plants.test.evil.example",
      "",
      `https://evil.example/${"x".repeat(8000)}`,
    ]) {
      const token = await signToken(signingKey, accessTokenClaims({ iss }));
      const result = await send(harness, token);
      expectRefused(result, token);
      expect(expectErrorAnswer(result).message).toBe("the token is invalid: wrong issuer (iss)");
    }
    const withoutIssuer = accessTokenClaims();
    delete withoutIssuer.iss;
    const token = await signToken(signingKey, withoutIssuer);
    expectRefused(await send(harness, token), token);
  });

  test("a token issued to another client (client_id) is refused", async () => {
    for (const client_id of ["another-client", "PLANT-STORE-LOCAL", ""]) {
      const token = await signToken(signingKey, accessTokenClaims({ client_id }));
      expectRefused(await send(harness, token), token);
    }
    const withoutClient = accessTokenClaims();
    delete withoutClient.client_id;
    const token = await signToken(signingKey, withoutClient);
    expectRefused(await send(harness, token), token);
  });

  test("an expired token is refused, as is one without an expiry", async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await signToken(signingKey, accessTokenClaims({ iat: now - 7200, exp: now - 60 }));
    const result = await send(harness, expired);
    expectRefused(result, expired);
    expect(expectErrorAnswer(result).message).toMatch(/expired/);

    const forever = accessTokenClaims();
    delete forever.exp;
    const withoutExpiry = await signToken(signingKey, forever);
    expectRefused(await send(harness, withoutExpiry), withoutExpiry);
  });

  test("a token not yet valid (nbf past the clock skew) is refused", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await signToken(signingKey, accessTokenClaims({ nbf: now + 60 }));
    const result = await send(harness, token);
    expectRefused(result, token);
    expect(expectErrorAnswer(result).message).toMatch(/not valid yet/);
  });

  test("a token whose crit names an extension we do not implement is refused (RFC 7515 §4.1.11)", async () => {
    const control = signWithRawHeader(signingKey, accessTokenClaims(), {});
    expect((await send(harness, control)).statusCode).toBe(200);
    for (const header of [
      { crit: ["exp2"], exp2: 1 },
      { b64: false, crit: ["b64"] },
      { crit: ["exp"], exp: 1 },
    ]) {
      const token = signWithRawHeader(signingKey, accessTokenClaims(), header);
      const result = await send(harness, token);
      expectRefused(result, token);
      expect(expectErrorAnswer(result).message).toMatch(/extension this API does not implement/);
    }
  });

  test("a token whose crit is not a non-empty list of names is refused as malformed", async () => {
    for (const crit of [[], "exp2", [1], [""], null, {}, [["exp2"]]]) {
      const token = signWithRawHeader(signingKey, accessTokenClaims(), { crit, exp2: 1 });
      const result = await send(harness, token);
      expectRefused(result, token);
      expect(expectErrorAnswer(result).message).toMatch(/malformed crit/);
    }
  });

  test("a token without the plants/write scope is refused with 403 insufficient_scope", async () => {
    const scopes: Record<string, unknown>[] = [
      { scope: "plants/read" },
      { scope: "plants/writer" },
      { scope: "xplants/write" },
      { scope: "" },
      { scope: undefined },
      { scope: undefined, scp: "plants/read" },
      { scope: undefined, scp: ["plants/read", "plants/writer"] },
    ];
    for (const claims of scopes) {
      const token = await signToken(signingKey, accessTokenClaims(claims));
      const result = await send(harness, token);
      expectRefused(result, token, 403, "insufficient_scope");
      expect(result.headers["www-authenticate"]).toContain('scope="plants/write"');
    }
    const granted = await signToken(signingKey, accessTokenClaims({ scope: "plants/read plants/write" }));
    expect((await send(harness, granted)).statusCode).toBe(200);
  });
});

describe("audience", () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ JWT_AUDIENCE: "plant-store-api" });
  });

  afterAll(async () => {
    await harness.close();
  });

  test("with JWT_AUDIENCE set, a token for another audience, or for none, is refused", async () => {
    const accepted = await harness.issuer.mint({ extraClaims: { aud: "plant-store-api" } });
    expect((await send(harness, accepted)).statusCode).toBe(200);
    for (const extraClaims of [{ aud: "another-api" }, { aud: ["another-api"] }, {}]) {
      const token = await harness.issuer.mint({ extraClaims });
      expectRefused(await send(harness, token), token);
    }
  });
});

describe.each(PAYLOAD_VERSIONS)("the Authorization header (payload %s)", (version) => {
  let harness: Harness;
  let good: string;
  let other: string;

  beforeAll(async () => {
    harness = await startHarness();
    good = await harness.issuer.mint();
    other = await harness.issuer.mint();
  });

  afterAll(async () => {
    await harness.close();
  });

  const sendAuthorization = (authorization: string) =>
    harness.handler(
      apiGatewayEvent(version, {
        withoutHeaders: ["authorization"],
        headers: { Authorization: authorization },
        body: `{"id":${nextId++},"name":"Fern"}`,
      }),
    );

  function expectInvalidRequest(result: ApiGatewayResult, ...tokens: string[]): void {
    expectErrorAnswer(result, 400);
    expect(result.headers["www-authenticate"]).toBe('Bearer realm="plants", error="invalid_request"');
    for (const token of tokens) expect(JSON.stringify(result)).not.toContain(token);
  }

  test("RFC 6750 §2.1 credentials are accepted: the scheme in any case, one or more spaces", async () => {
    for (const authorization of [
      `Bearer ${good}`,
      `bearer ${good}`,
      `BEARER   ${good}`,
      ` Bearer ${good}\t`,
    ]) {
      expect((await sendAuthorization(authorization)).statusCode).toBe(200);
    }
  });

  test("two Bearer credentials in one value are a malformed request, even two good tokens", async () => {
    for (const authorization of [
      `Bearer ${good},Bearer ${other}`,
      `Bearer ${good}, Bearer ${other}`,
      `Bearer ${good},Basic dXNlcjpwYXNz`,
      `Basic dXNlcjpwYXNz,Bearer ${good}`,
    ]) {
      expectInvalidRequest(await sendAuthorization(authorization), good, other);
    }
  });

  test("a Bearer scheme not followed by exactly spaces and one token is a malformed request", async () => {
    for (const authorization of [
      `Bearer\t${good}`,
      `Bearer \t${good}`,
      `Bearer ${good} extra`,
      "Bearer",
      "Bearer ",
      `Bearer "${good}"`,
      `Bearer=${good}`,
    ]) {
      expectInvalidRequest(await sendAuthorization(authorization), good);
    }
  });

  test("another scheme, or a token with no scheme, stays a 401 with a bare challenge", async () => {
    for (const authorization of ["Basic dXNlcjpwYXNz", `Token ${good}`, good, `Bearer${good}`]) {
      const result = await sendAuthorization(authorization);
      expectErrorAnswer(result, 401);
      expect(result.headers["www-authenticate"]).toBe('Bearer realm="plants"');
    }
  });
});

test("payload 1.0: two Authorization headers (multiValueHeaders) are a malformed request", async () => {
  const harness = await startHarness();
  try {
    const [first, second] = [await harness.issuer.mint(), await harness.issuer.mint()];
    const event = apiGatewayEvent("1.0", { token: first, body: `{"id":${nextId++},"name":"Fern"}` });
    if (!("multiValueHeaders" in event)) throw new Error("a payload 1.0 event has multiValueHeaders");
    event.multiValueHeaders = {
      ...event.multiValueHeaders,
      Authorization: [`Bearer ${first}`, `Bearer ${second}`],
    };
    const result = await harness.handler(event);
    expectErrorAnswer(result, 400);
    expectBearerChallenge(result, "invalid_request");
  } finally {
    await harness.close();
  }
});

describe("the issuer's key set (JWKS)", () => {
  let harness: Harness;

  afterEach(async () => {
    harness.jwks.setBehaviour("serve");
    await harness.close();
  });

  /**
   * The issuer has rotated to a new key, which the function has not cached yet: the next token
   * makes it fetch the key set. (Starting warm, with one good request, keeps these tests the same
   * whether or not the function prefetched the key set at init.)
   */
  async function rotatedKeyToken(): Promise<string> {
    expect((await send(harness, await harness.issuer.mint())).statusCode).toBe(200);
    const rotated = await createTokenIssuer(TEST_ISSUER, await generateSigningKey());
    harness.jwks.setKeys({ keys: [...harness.issuer.jwks.keys, ...rotated.jwks.keys] });
    return rotated.mint();
  }

  /** The issuer's fault: 503 with Retry-After, no challenge, nothing of the token. */
  function expectIssuerUnavailable(result: ApiGatewayResult, token: string): void {
    expectErrorAnswer(result, 503);
    expectRetryAfter(result);
    expect(result.headers["www-authenticate"]).toBeUndefined();
    expect(JSON.stringify(result)).not.toContain(token);
  }

  test("tokens naming unknown keys fetch the key set once: 401 for the first, then 503 inside the window", async () => {
    harness = await startHarness();
    expect((await send(harness, await harness.issuer.mint())).statusCode).toBe(200);
    const fetchesWhenWarm = harness.jwks.fetches();

    const attackerKey = await generateSigningKey();
    const unknownKeyTokens = async (count: number) =>
      Promise.all(
        Array.from({ length: count }, (_, index) =>
          signToken(attackerKey, accessTokenClaims(), { kid: `unknown-${index}-${nextId}` }),
        ),
      );
    const [first = "", ...rest] = await unknownKeyTokens(5);
    expectRefused(await send(harness, first), first);
    for (const token of rest) expectIssuerUnavailable(await send(harness, token), token);
    const concurrent = await unknownKeyTokens(20);
    const results = await Promise.all(concurrent.map((token) => send(harness, token)));
    for (const [index, result] of results.entries()) expectIssuerUnavailable(result, concurrent[index] ?? "");
    expect(harness.jwks.fetches()).toBe(fetchesWhenWarm + 1);

    // The known key stays usable throughout.
    expect((await send(harness, await harness.issuer.mint())).statusCode).toBe(200);
  });

  test.each(["html", "empty-object", "truncated"] as const)(
    "an issuer answering 200 with %s is the issuer's fault: 503, and one fetch per window",
    async (fault) => {
      harness = await startHarness();
      const token = await rotatedKeyToken();
      const fetchesBefore = harness.jwks.fetches();
      harness.jwks.setBehaviour(fault);
      for (let request = 0; request < 10; request++)
        expectIssuerUnavailable(await send(harness, token), token);
      expect(harness.jwks.fetches()).toBe(fetchesBefore + 1);
    },
  );

  test("a JWKS endpoint that is down fails closed with 503 and Retry-After, without retrying its 500", async () => {
    harness = await startHarness();
    const token = await rotatedKeyToken();
    const fetchesBefore = harness.jwks.fetches();
    harness.jwks.setBehaviour("fail");
    expectIssuerUnavailable(await send(harness, token), token);
    expect(harness.jwks.fetches()).toBe(fetchesBefore + 1);
  });

  // A hanging endpoint, and the 1 s timeout of each attempt: test/lambda/authenticate.test.ts, with
  // timeouts the test fires instead of waiting them out.

  test("once the keys are cached, the JWKS endpoint going down does not lock callers out", async () => {
    harness = await startHarness();
    expect((await send(harness, await harness.issuer.mint())).statusCode).toBe(200);
    const fetchesWhenWarm = harness.jwks.fetches();
    for (const fault of ["fail", "html", "hang"] as const) {
      harness.jwks.setBehaviour(fault);
      expect((await send(harness, await harness.issuer.mint())).statusCode).toBe(200);
    }
    expect(harness.jwks.fetches()).toBe(fetchesWhenWarm);
  });
});
