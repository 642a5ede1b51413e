/**
 * The issuer's key set taken key by key (lambda/auth/key-set.ts), before aws-jwt-verify sees it, through
 * the handler and a real loopback key set: a malformed, private, weak or ambiguous key beside a good one is
 * left out with one log line, the good key's tokens answer 200, and a token naming a left-out key a 401 that
 * says why, without a fetch; a weak key accepts no token, not even one forged the way its weakness allows.
 * aws-jwt-verify alone would refuse the whole set for one malformed key, and take weak and private ones.
 */
import type { KeyObject } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createAuthenticator } from "../../lambda/auth/authenticate.ts";
import { MAX_KEYS_IN_KEY_SET } from "../../lambda/auth/key-set.ts";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { createHandler } from "../../lambda/http/create-handler.ts";
import { LOCAL_CLIENT_ID } from "../../local/token-issuer.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { TEST_ISSUER } from "../../support/harness.ts";
import { InMemoryPlantStore } from "../../support/in-memory-plant-store.ts";
import { type JwksBehaviour, type JwksServer, startJwksServer } from "../../support/jwks-server.ts";
import { expectBearerChallenge, expectErrorAnswer, expectRetryAfter } from "../support/answers.ts";
import {
  accessTokenClaims,
  base64url,
  generateKeys,
  jwsSignature,
  signingInput,
  weakKeys,
} from "../support/forged-tokens.ts";
import { captureLogs, type LogCapture } from "../support/log-capture.ts";

const [good, other, weakOnes] = await Promise.all([
  generateKeys("rsa", { modulusLength: 2048 }),
  generateKeys("rsa", { modulusLength: 2048 }),
  weakKeys(),
]);
const goodJwk = { ...good.publicKey.export({ format: "jwk" }), kid: "good", alg: "RS256", use: "sig" };
const publicOf = (key: KeyObject, members: object) => ({ ...key.export({ format: "jwk" }), ...members });

let jwks: JwksServer;
let logs: LogCapture;
let nextId = 1;

beforeAll(async () => {
  jwks = await startJwksServer({ keys: [goodJwk] });
});
afterAll(() => jwks.close());
beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => logs.restore());

/** A fresh function instance over the loopback key set holding `keys`, its first request fetching them. */
function functionServing(keys: unknown): (token: string) => Promise<ApiGatewayResult> {
  jwks.setKeys({ keys });
  const handler = createHandler({
    authenticate: createAuthenticator({
      issuer: TEST_ISSUER,
      jwksUrl: jwks.url,
      audiences: [],
      clientIds: [LOCAL_CLIENT_ID],
    }),
    store: new InMemoryPlantStore(),
  });
  return (token) => handler(apiGatewayEvent("2.0", { token, body: `{"id":${nextId++},"name":"Fern"}` }));
}

function tokenOf(key: KeyObject, kid: string, signature?: (input: string) => Buffer): string {
  const input = signingInput({ alg: "RS256", kid, typ: "JWT" }, accessTokenClaims());
  return `${input}.${signature ? base64url(signature(input)) : jwsSignature("RS256", key, input)}`;
}

function expectLeftOut(result: ApiGatewayResult, reason: RegExp): void {
  const { message } = expectErrorAnswer(result, 401);
  expectBearerChallenge(result, "invalid_token");
  expect(message).toMatch(/^the token is invalid: the issuer's key it names cannot be used: /);
  expect(message).toMatch(reason);
}

const leftOutLines = () =>
  logs
    .text()
    .split("\n")
    .filter((line) => line.includes("a key of the issuer's key set is left out"))
    .map((line) => JSON.parse(line) as { kid: unknown; reason: string });

describe("a key left out beside a good one: its reason logged once and told to its tokens", () => {
  const { d, p } = other.privateKey.export({ format: "jwk" });
  test.each([
    ["private-d", { ...publicOf(other.publicKey, {}), d }, /private key member \(d\)/],
    ["private-p", { ...publicOf(other.publicKey, {}), p }, /private key member \(p\)/],
    ["alg-null", publicOf(other.publicKey, { alg: null }), /not a JSON Web Key/],
    ["no-n", { kty: "RSA", e: "AQAB" }, /cannot import it/],
    ["enc", publicOf(other.publicKey, { use: "enc" }), /another use \(enc\)/],
    ["oct", { kty: "oct", k: "c2VjcmV0" }, /private key member \(k\)/],
    ["twice", publicOf(other.publicKey, {}), /more than one key under its kid/],
  ])("%s", async (kid, jwk, reason) => {
    const keys = [goodJwk, { ...jwk, kid }, ...(kid === "twice" ? [publicOf(good.publicKey, { kid })] : [])];
    const answer = functionServing(keys);
    expect((await answer(tokenOf(good.privateKey, "good"))).statusCode).toBe(200);
    expectLeftOut(await answer(tokenOf(other.privateKey, kid)), reason);
    expect(leftOutLines().map((line) => line.kid)).toEqual(kid === "twice" ? ["twice"] : [kid]);
    expect(leftOutLines()[0]?.reason).toMatch(reason);
    expect(logs.text()).not.toContain(String(d));
    expect(jwks.fetches()).toBeGreaterThan(0);
  });

  test("a key without a kid, or with a numeric one, is left out and logged; the good one serves", async () => {
    const answer = functionServing([
      publicOf(other.publicKey, {}),
      publicOf(other.publicKey, { kid: 7 }),
      goodJwk,
    ]);
    expect((await answer(tokenOf(good.privateKey, "good"))).statusCode).toBe(200);
    expect(leftOutLines().map((line) => line.kid)).toEqual([null, null]);
  });

  test("a left-out kid's tokens fetch nothing: the set it was left out of answers them", async () => {
    const answer = functionServing([goodJwk, publicOf(other.publicKey, { kid: "enc", use: "enc" })]);
    await answer(tokenOf(good.privateKey, "good"));
    const fetches = jwks.fetches();
    for (let i = 0; i < 5; i++) expectLeftOut(await answer(tokenOf(other.privateKey, "enc")), /another use/);
    expect(jwks.fetches()).toBe(fetches);
  });
});

describe("weak keys are never trusted", () => {
  test.each(weakOnes.map((key) => [key.kid, key] as const))(
    "%s: its forgery is refused",
    async (_kid, weak) => {
      const answer = functionServing([goodJwk, weak.publicJwk]);
      expectLeftOut(
        await answer(tokenOf(good.privateKey, weak.kid, weak.forge)),
        /RSA (modulus|public exponent)/,
      );
    },
  );

  test("an even modulus is refused; exponents issuers use (3, 65537, 2^32 - 1) and 3072 bits are taken", async () => {
    const n = Buffer.from(String(goodJwk.n), "base64url");
    n[n.length - 1] = (n.at(-1) ?? 0) & 0xfe;
    const e = (value: number) =>
      base64url(Buffer.from(value.toString(16).padStart(8, "0"), "hex").subarray(value > 0xffff ? 0 : 1));
    const large = await generateKeys("rsa", { modulusLength: 3072, publicExponent: 3 });
    const answer = functionServing([
      goodJwk,
      { kty: "RSA", kid: "even", n: base64url(n), e: "AQAB" },
      publicOf(large.publicKey, { kid: "large" }),
      publicOf(other.publicKey, { kid: "e-max", e: e(0xffffffff) }),
    ]);
    expectLeftOut(await answer(tokenOf(good.privateKey, "even")), /modulus is even/);
    expect((await answer(tokenOf(large.privateKey, "large"))).statusCode).toBe(200);
    expect(leftOutLines().map((line) => line.kid)).toEqual(["even"]);
  });
});

describe("a document that is not a key set is the issuer's fault: 503 with Retry-After, never 401", () => {
  test.each(["html", "empty-object", "truncated"] as JwksBehaviour[])("%s", async (behaviour) => {
    const answer = functionServing([goodJwk]);
    jwks.setBehaviour(behaviour);
    try {
      const result = await answer(tokenOf(good.privateKey, "good"));
      expect(expectErrorAnswer(result, 503).message).toMatch(
        /key set was fetched but is not a key set this API can take/,
      );
      expectRetryAfter(result);
    } finally {
      jwks.setBehaviour("serve");
    }
  });

  test(`more than ${MAX_KEYS_IN_KEY_SET} keys: 503, and none of them kept`, async () => {
    const answer = functionServing(
      Array.from({ length: MAX_KEYS_IN_KEY_SET + 1 }, (_, i) => ({ ...goodJwk, kid: `k${i}` })),
    );
    const result = await answer(tokenOf(good.privateKey, "k0"));
    expectErrorAnswer(result, 503);
    expectRetryAfter(result);
  });
});
