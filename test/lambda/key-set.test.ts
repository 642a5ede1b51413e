/**
 * The issuer's key set taken key by key (lambda/auth/key-set.ts, key-strength.ts), through the handler
 * and a real loopback key set: a malformed, unusable or weak key beside a good one is left out with one
 * log line per fetch, tokens of the good key answer 200, and a token naming the left-out key a 401 that
 * says why; a weak key never accepts a token, not even one forged the way its weakness allows; an EC or
 * OKP key is left out (the API verifies RS256, RS384 and RS512 only), and under a kid it shares with an
 * RSA key the RSA key serves alone.
 */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import { createAuthenticator } from "../../lambda/auth/authenticate.ts";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { createHandler } from "../../lambda/http/create-handler.ts";
import { LOCAL_CLIENT_ID } from "../../local/token-issuer.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { TEST_ISSUER } from "../../support/harness.ts";
import { InMemoryPlantStore } from "../../support/in-memory-plant-store.ts";
import { type JwksServer, startJwksServer } from "../../support/jwks-server.ts";
import { expectBearerChallenge, expectErrorAnswer } from "../support/answers.ts";
import {
  accessTokenClaims,
  base64url,
  jwsSignature,
  pkcs1Encoding,
  signingInput,
} from "../support/forged-tokens.ts";
import { captureLogs, type LogCapture } from "../support/log-capture.ts";

const good = generateKeyPairSync("rsa", { modulusLength: 2048 });
const goodJwk = { ...good.publicKey.export({ format: "jwk" }), kid: "good", alg: "RS256", use: "sig" };
const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
const ecJwk = ec.publicKey.export({ format: "jwk" });
const ed25519 = generateKeyPairSync("ed25519");
const ed25519Jwk = ed25519.publicKey.export({ format: "jwk" });

/** Why an EC, OKP or other non-RSA key is left out. */
const NOT_RSA = "its kty is not RSA: this API verifies RS256, RS384 and RS512 tokens";

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

/** RFC 7518 §6.2.2, §6.3.2, §6.4: the members only a private or symmetric key has. */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] as const;

const withoutMember = (jwk: object, member: string) =>
  Object.fromEntries(Object.entries(jwk).filter(([name]) => name !== member));

describe("one malformed or unusable key beside a good one", () => {
  // Each bad key, and the token a caller holding its private key would send (none when no kid names it).
  const rsaToken = () => tokenOf(good.privateKey, "RS256", "bad");
  const notRsa = new RegExp(`${NOT_RSA}$`);
  const KEY_OPS = /its key_ops is not verify alone$/;
  const cases: [string, object, (() => string) | undefined, RegExp][] = [
    ["alg null", { ...goodJwk, kid: "bad", alg: null }, rsaToken, /its alg is not a string/],
    ["use null", { ...goodJwk, kid: "bad", use: null }, rsaToken, /its use is not a string/],
    ["a numeric n", { ...goodJwk, kid: "bad", n: 12345 }, rsaToken, /its n is not a string/],
    // A member of another kty's keys, malformed, makes the entry no key to trust, whatever its kty.
    ["a numeric crv", { ...goodJwk, kid: "bad", crv: 5 }, rsaToken, /its crv is not a string/],
    ["x null", { ...goodJwk, kid: "bad", x: null }, rsaToken, /its x is not a string/],
    ["no kty", { ...withoutMember(goodJwk, "kty"), kid: "bad" }, rsaToken, /it has no kty/],
    ["key_ops without verify", { ...goodJwk, kid: "bad", key_ops: ["sign"] }, rsaToken, KEY_OPS],
    ["key_ops not a list", { ...goodJwk, kid: "bad", key_ops: "verify" }, rsaToken, KEY_OPS],
    // The API verifies RS256, RS384 and RS512 only: a key of any other kty is left out, saying so.
    ["an EC key", { ...ecJwk, kid: "bad" }, rsaToken, notRsa],
    ["an Ed25519 key", { ...ed25519Jwk, kid: "bad" }, rsaToken, notRsa],
    ["kty oct", { kty: "oct", kid: "bad" }, rsaToken, notRsa],
    ["not an object", ["bad"], undefined, /not a JSON object/],
    // RFC 7517 §4.3: ext is a boolean; key_ops names each operation once, and a public key only verifies.
    ["ext not a boolean", { ...goodJwk, kid: "bad", ext: "true" }, rsaToken, /its ext is not a boolean/],
    [
      "key_ops naming verify twice",
      { ...goodJwk, kid: "bad", key_ops: ["verify", "verify"] },
      rsaToken,
      KEY_OPS,
    ],
    [
      "key_ops mixing verify and sign",
      { ...goodJwk, kid: "bad", key_ops: ["verify", "sign"] },
      rsaToken,
      KEY_OPS,
    ],
    // A key set entry publishing a private member has given its signing secret away: the token signed with
    // that very key, whose public part is right, is refused all the same.
    ...PRIVATE_MEMBERS.map((member): [string, object, () => string, RegExp] => [
      `an RSA key publishing its private member ${member}`,
      { ...goodJwk, kid: "bad", [member]: base64url(Buffer.alloc(32, 7)) },
      rsaToken,
      new RegExp(`private key member \\(${member}\\)`),
    ]),
  ];

  test.each(cases)(
    "%s: the good key serves (200), the bad one is a 401 saying why, logged once per fetch",
    async (_, bad, badToken, reason) => {
      const send = functionServing([bad, goodJwk]);
      expect((await send(tokenOf(good.privateKey, "RS256", "good"))).statusCode).toBe(200);
      const fetches = jwks.fetches();
      if (badToken !== undefined) expectKeyCannotBeUsed(await send(badToken()), reason);
      // A left-out key's kid is known: naming it fetches nothing.
      expect(jwks.fetches()).toBe(fetches);
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
    const send = functionServing([{ ...goodJwk, kid: 7 }, withoutMember(goodJwk, "kid"), goodJwk]);
    expectKeyCannotBeUsed(await send(tokenOf(good.privateKey, "RS256", "7")), /its kid is not a string/);
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

/** A public RSA JWK of `bits` bits that no one holds the private key of: odd, top bit set. */
function rsaModulusOf(bits: number): string {
  const modulus = Buffer.alloc(Math.ceil(bits / 8), 0x5a);
  modulus[0] = 1 << ((bits - 1) % 8);
  modulus[modulus.length - 1] = 0x5b;
  return base64url(modulus);
}

describe("weak keys are never trusted", () => {
  test("RSA moduli of 512 and 1024 bits: tokens their private keys signed are refused", async () => {
    for (const bits of [512, 1024]) {
      const weak = generateKeyPairSync("rsa", { modulusLength: bits });
      const send = functionServing([{ ...weak.publicKey.export({ format: "jwk" }), kid: "bad" }, goodJwk]);
      expectKeyCannotBeUsed(
        await send(tokenOf(weak.privateKey, "RS256", "bad")),
        new RegExp(`modulus has ${bits} bits; at least 2048`),
      );
      expect((await send(tokenOf(good.privateKey, "RS256", "good"))).statusCode).toBe(200);
    }
  });

  test("an RSA key with e = 1 is refused, and with it a token forged with no private key", async () => {
    const send = functionServing([{ ...goodJwk, kid: "bad", e: base64url(Buffer.from([1])) }, goodJwk]);
    const forged = forgedToken("RS256", "bad", (input) => pkcs1Encoding(input, 256));
    expectKeyCannotBeUsed(await send(forged), /public exponent is 1$/);
  });

  test.each([
    ["even", Buffer.from([1, 0, 0]), /public exponent is even/],
    ["zero", Buffer.from([0]), /public exponent is even/],
    ["of 3,064 bits", Buffer.alloc(383, 0xff), /public exponent has 3064 bits; at most 32/],
    // Below the modulus, so node:crypto runs it in full: about 4 ms per forged token if taken (0.05 ms
    // for e = 65537); refused when the key set arrives, it costs nothing per token.
    ["of 2,040 bits", Buffer.alloc(255, 0xff), /public exponent has 2040 bits; at most 32/],
    ["of 33 bits", Buffer.from([1, 0, 0, 0, 1]), /public exponent has 33 bits; at most 32/],
  ])("an RSA public exponent %s is refused when the key set arrives", async (_, exponent, reason) => {
    const send = functionServing([{ ...goodJwk, kid: "bad", e: base64url(exponent) }, goodJwk]);
    expectKeyCannotBeUsed(await send(tokenOf(good.privateKey, "RS256", "bad")), reason);
    expect(leftOutLines()).toHaveLength(1);
  });

  test("exponents issuers use (3, 65537, 2^32 - 1) and moduli up to 8192 bits are taken; 8193 bits are not", async () => {
    const published = [3, 65537, 2 ** 32 - 1].map((exponent, index) => ({
      kty: "RSA",
      kid: `e-${index}`,
      n: goodJwk.n,
      e: base64url(Buffer.from(exponent.toString(16).padStart(exponent > 0xffffff ? 8 : 6, "0"), "hex")),
    }));
    const send = functionServing([
      ...published,
      { kty: "RSA", kid: "8192", n: rsaModulusOf(8192), e: "AQAB" },
      { kty: "RSA", kid: "8193", n: rsaModulusOf(8193), e: "AQAB" },
    ]);
    // Taken, so a token naming one is judged on its signature (the keys are not the signer's).
    for (const kid of ["e-0", "e-2", "8192"]) {
      expect(expectErrorAnswer(await send(tokenOf(good.privateKey, "RS256", kid)), 401).message, kid).toBe(
        "the token is invalid: bad signature",
      );
    }
    expect((await send(tokenOf(good.privateKey, "RS256", "e-1"))).statusCode).toBe(200);
    expectKeyCannotBeUsed(await send(tokenOf(good.privateKey, "RS256", "8193")), /8193 bits; at most 8192/);
    expect(leftOutLines().map((line) => line.kid)).toEqual(["8193"]);
  });
});

describe("EC and OKP keys: the API verifies RS256, RS384 and RS512 only", () => {
  test("each is left out with its reason; a well-signed ES*/EdDSA token is refused as an alg not allowed", async () => {
    const p521 = generateKeyPairSync("ec", { namedCurve: "P-521" });
    const ed448 = generateKeyPairSync("ed448");
    const send = functionServing([
      { ...ecJwk, kid: "p256", alg: "ES256", use: "sig" },
      { ...p521.publicKey.export({ format: "jwk" }), kid: "p521" },
      { ...ed25519Jwk, kid: "ed25519", alg: "EdDSA" },
      { ...ed448.publicKey.export({ format: "jwk" }), kid: "ed448" },
      goodJwk,
    ]);
    expect((await send(tokenOf(good.privateKey, "RS256", "good"))).statusCode).toBe(200);
    const fetches = jwks.fetches();
    for (const [key, alg, kid] of [
      [ec.privateKey, "ES256", "p256"],
      [p521.privateKey, "ES512", "p521"],
      [ed25519.privateKey, "EdDSA", "ed25519"],
    ] as const) {
      const { message } = expectErrorAnswer(await send(tokenOf(key, alg, kid)), 401);
      expect(message, alg).toBe("the token is invalid: signature algorithm not allowed");
    }
    // An RS256 token naming one of them is told why the key cannot be used.
    for (const kid of ["p256", "p521", "ed25519", "ed448"]) {
      const result = await send(tokenOf(good.privateKey, "RS256", kid));
      expect(expectErrorAnswer(result, 401).message, kid).toBe(
        `the token is invalid: the issuer's key it names cannot be used: ${NOT_RSA}`,
      );
      expectBearerChallenge(result, "invalid_token");
    }
    // Refused before the key set is asked (ES*/EdDSA) or from the set held (RS256): nothing fetched again.
    expect(jwks.fetches()).toBe(fetches);
    expect(leftOutLines().map(({ kid, reason }) => [kid, reason])).toEqual(
      ["p256", "p521", "ed25519", "ed448"].map((kid) => [kid, NOT_RSA]),
    );
  });
});

describe("a kid shared by keys of different types (RFC 7517 §4.5)", () => {
  test("an RSA key and an EC key: RS256 tokens of the RSA key answer 200, ES256 tokens of the EC key 401", async () => {
    const send = functionServing([
      { ...ecJwk, kid: "shared" },
      { ...goodJwk, kid: "shared" },
    ]);
    expect((await send(tokenOf(good.privateKey, "RS256", "shared"))).statusCode).toBe(200);
    for (const [key, alg] of [
      [ec.privateKey, "ES256"],
      [ed25519.privateKey, "EdDSA"],
    ] as const) {
      const refused = expectErrorAnswer(await send(tokenOf(key, alg, "shared")), 401);
      expect(refused.message, alg).toBe("the token is invalid: signature algorithm not allowed");
    }
    expect(leftOutLines().map(({ kid, reason }) => [kid, reason])).toEqual([["shared", NOT_RSA]]);
  });

  test("a left-out RSA key beside an EC key: a token is told why the RSA key cannot be used", async () => {
    const weak = generateKeyPairSync("rsa", { modulusLength: 1024 });
    const send = functionServing([
      { ...ecJwk, kid: "shared" },
      { ...weak.publicKey.export({ format: "jwk" }), kid: "shared" },
      goodJwk,
    ]);
    expectKeyCannotBeUsed(await send(tokenOf(weak.privateKey, "RS256", "shared")), /modulus has 1024 bits/);
  });

  test("two keys of one type under one kid are ambiguous: 401, whichever signed", async () => {
    const second = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const send = functionServing([
      { ...goodJwk, kid: "twice" },
      { ...second.publicKey.export({ format: "jwk" }), kid: "twice" },
      { ...ecJwk, kid: "twice" },
    ]);
    for (const signer of [good.privateKey, second.privateKey]) {
      const { message } = expectErrorAnswer(await send(tokenOf(signer, "RS256", "twice")), 401);
      expect(message).toMatch(/more than one key of its alg's type under its kid/);
    }
  });

  test("a weak key beside a good one of its type under one kid: the good one serves alone", async () => {
    const weak = generateKeyPairSync("rsa", { modulusLength: 1024 });
    const send = functionServing([
      { ...weak.publicKey.export({ format: "jwk" }), kid: "rotating" },
      { ...goodJwk, kid: "rotating" },
    ]);
    expect((await send(tokenOf(good.privateKey, "RS256", "rotating"))).statusCode).toBe(200);
    const refused = expectErrorAnswer(await send(tokenOf(weak.privateKey, "RS256", "rotating")), 401);
    expect(refused.message).toBe("the token is invalid: bad signature");
  });
});
