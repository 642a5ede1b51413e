/**
 * The issuer's key set taken key by key (lambda/auth/key-set.ts, key-strength.ts), through the handler
 * and a real loopback key set: a malformed, unusable or weak key beside a good one is left out with one
 * log line per fetch, tokens of the good key answer 200, and a token naming the left-out key a 401 that
 * says why; a weak key never accepts a token, not even one forged the way its weakness allows; a kid
 * shared by keys of different types is resolved by the token's alg.
 */
import { createHash, generateKeyPairSync, type JsonWebKey, type KeyObject } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import { createAuthenticator } from "../../lambda/auth/authenticate.ts";
import { SMALL_ORDER_KEYS } from "../../lambda/auth/key-strength.ts";
import { DEFAULT_REQUIRED_SCOPE } from "../../lambda/defaults.ts";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { createHandler } from "../../lambda/http/create-handler.ts";
import { LOCAL_CLIENT_ID } from "../../local/token-issuer.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { TEST_ISSUER } from "../../support/harness.ts";
import { InMemoryPlantStore } from "../../support/in-memory-plant-store.ts";
import { type JwksServer, startJwksServer } from "../../support/jwks-server.ts";
import { expectBearerChallenge, expectErrorAnswer } from "../support/answers.ts";
import { accessTokenClaims, base64url, jwsSignature, signingInput } from "../support/forged-tokens.ts";
import { captureLogs, type LogCapture } from "../support/log-capture.ts";

const good = generateKeyPairSync("rsa", { modulusLength: 2048 });
const goodJwk = { ...good.publicKey.export({ format: "jwk" }), kid: "good", alg: "RS256", use: "sig" };
const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
const ecJwk = ec.publicKey.export({ format: "jwk" });
const p384Jwk = generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey.export({ format: "jwk" });

let jwks: JwksServer;
let logs: LogCapture;
let nextId = 1;

beforeAll(async () => {
  jwks = await startJwksServer({ keys: [goodJwk] });
});

afterAll(async () => {
  await jwks.close();
});

beforeEach(() => {
  logs = captureLogs();
});

afterEach(() => {
  logs.restore();
  vi.restoreAllMocks();
});

/** A fresh function instance (its own key cache) over the loopback key set holding `keys`. */
function functionServing(keys: object[]): (token: string) => Promise<ApiGatewayResult> {
  jwks.setKeys({ keys });
  const handler = createHandler({
    authenticate: createAuthenticator({
      issuer: TEST_ISSUER,
      jwksUrl: jwks.url,
      audiences: [],
      clientIds: [LOCAL_CLIENT_ID],
      requiredScope: DEFAULT_REQUIRED_SCOPE,
    }),
    store: new InMemoryPlantStore(),
  });
  return (token) => handler(apiGatewayEvent("2.0", { token, body: `{"id":${nextId++},"name":"Fern"}` }));
}

/** A token of good claims signed by `key` under `alg`, naming `kid`. */
function tokenOf(key: KeyObject, alg: string, kid: string): string {
  const input = signingInput({ alg, kid, typ: "JWT" }, accessTokenClaims());
  return `${input}.${jwsSignature(alg, key, input)}`;
}

/** A token over good claims carrying exactly this signature. */
function forgedToken(alg: string, kid: string, signature: (input: string) => Buffer): string {
  const input = signingInput({ alg, kid, typ: "JWT" }, accessTokenClaims());
  return `${input}.${base64url(signature(input))}`;
}

function expectKeyCannotBeUsed(result: ApiGatewayResult, reason: RegExp): void {
  const { message } = expectErrorAnswer(result, 401);
  expectBearerChallenge(result, "invalid_token");
  expect(message).toMatch(/^the token is invalid: the issuer's key it names cannot be used: /);
  expect(message).toMatch(reason);
}

/** The lines logged about left-out keys. */
function leftOutLines(): { kid: unknown; reason: string }[] {
  return logs
    .text()
    .split("\n")
    .filter((line) => line.includes("a key of the issuer's key set is left out"))
    .map((line) => JSON.parse(line) as { kid: unknown; reason: string });
}

const withoutMember = (jwk: object, member: string) =>
  Object.fromEntries(Object.entries(jwk).filter(([name]) => name !== member));

describe("one malformed or unusable key beside a good one", () => {
  const offCurveY = Buffer.from(ecJwk.y ?? "", "base64url");
  offCurveY[3] = (offCurveY[3] ?? 0) ^ 1;
  // Each bad key, and the token a caller holding its private key would send (none when no kid names it).
  const ecToken = () => tokenOf(ec.privateKey, "ES256", "bad");
  const rsaToken = () => tokenOf(good.privateKey, "RS256", "bad");
  const cases: [string, object, (() => string) | undefined, RegExp][] = [
    ["alg null", { ...ecJwk, kid: "bad", alg: null }, ecToken, /its alg is not a string/],
    ["use null", { ...ecJwk, kid: "bad", use: null }, ecToken, /its use is not a string/],
    ["a numeric n", { ...goodJwk, kid: "bad", n: 12345 }, rsaToken, /its n is not a string/],
    ["no kty", { ...withoutMember(ecJwk, "kty"), kid: "bad" }, ecToken, /it has no kty/],
    ["crv null", { ...ecJwk, kid: "bad", crv: null }, ecToken, /its crv is not a string/],
    ["an EC point off its curve", { ...ecJwk, kid: "bad", y: base64url(offCurveY) }, ecToken, /not on P-256/],
    ["a P-384 point under crv P-256", { ...p384Jwk, kid: "bad", crv: "P-256" }, ecToken, /32-byte P-256/],
    ["key_ops without verify", { ...ecJwk, kid: "bad", key_ops: ["sign"] }, ecToken, /key_ops do not/],
    ["key_ops not a list", { ...ecJwk, kid: "bad", key_ops: "verify" }, ecToken, /key_ops is not a list/],
    ["kty oct", { kty: "oct", kid: "bad", k: "c2VjcmV0" }, ecToken, /kty is not RSA, EC or OKP/],
    ["not an object", ["bad"], undefined, /not a JSON object/],
  ];

  test.each(cases)(
    "%s: the good key serves (200), the bad one is a 401 saying why, logged once per fetch",
    async (_, bad, badToken, reason) => {
      const send = functionServing([bad, goodJwk]);
      expect((await send(tokenOf(good.privateKey, "RS256", "good"))).statusCode).toBe(200);
      if (badToken !== undefined) expectKeyCannotBeUsed(await send(badToken()), reason);
      expect((await send(tokenOf(good.privateKey, "RS256", "good"))).statusCode).toBe(200);
      const lines = leftOutLines();
      expect(lines).toHaveLength(1);
      expect(lines[0]?.reason).toMatch(reason);
      // Nothing of the key but its kid: no modulus, no coordinate.
      for (const value of Object.values(bad)) {
        if (typeof value === "string" && value.length > 8) expect(logs.text()).not.toContain(value);
      }
    },
  );

  test("a numeric kid is left out, named as a token would name it; a key without kid is left out too", async () => {
    const send = functionServing([{ ...ecJwk, kid: 7 }, withoutMember(ecJwk, "kid"), goodJwk]);
    expectKeyCannotBeUsed(await send(tokenOf(ec.privateKey, "ES256", "7")), /its kid is not a string/);
    expect((await send(tokenOf(good.privateKey, "RS256", "good"))).statusCode).toBe(200);
    expect(leftOutLines()).toEqual([
      {
        level: "WARN",
        message: "a key of the issuer's key set is left out",
        kid: "7",
        reason: "its kid is not a string",
      },
      {
        level: "WARN",
        message: "a key of the issuer's key set is left out",
        kid: null,
        reason: "it has no kid: this API takes only tokens naming their key",
      },
    ]);
  });
});
