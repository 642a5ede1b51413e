/**
 * The issuer's key set taken key by key (lambda/auth/key-set.ts, key-strength.ts), through the handler
 * and a real loopback key set: a malformed, unusable or weak key beside a good one is left out with one
 * log line per fetch, tokens of the good key answer 200, and a token naming the left-out key a 401 that
 * says why; a weak key never accepts a token, not even one forged the way its weakness allows; a kid
 * shared by keys of different types is resolved by the token's alg.
 */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import { createAuthenticator } from "../../lambda/auth/authenticate.ts";
import { smallOrderKeys } from "../../lambda/auth/okp-key-strength.ts";
import { DEFAULT_REQUIRED_SCOPE } from "../../lambda/defaults.ts";
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

/** RFC 7518 §6.2.2, §6.3.2, §6.4: the members only a private or symmetric key has. */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] as const;

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
    ["kty oct", { kty: "oct", kid: "bad" }, ecToken, /kty is not RSA, EC or OKP/],
    ["not an object", ["bad"], undefined, /not a JSON object/],
    // RFC 7517 §4.3: ext is a boolean; key_ops names each operation once, and a public key only verifies.
    ["ext not a boolean", { ...ecJwk, kid: "bad", ext: "true" }, ecToken, /its ext is not a boolean/],
    [
      "key_ops naming verify twice",
      { ...ecJwk, kid: "bad", key_ops: ["verify", "verify"] },
      ecToken,
      /twice/,
    ],
    [
      "key_ops mixing verify and sign",
      { ...ecJwk, kid: "bad", key_ops: ["verify", "sign"] },
      ecToken,
      /besides verify/,
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

  test("libsodium's list of Ed25519 small-order encodings is the one the check compares against", () => {
    const libsodium = [
      "0000000000000000000000000000000000000000000000000000000000000000",
      "0100000000000000000000000000000000000000000000000000000000000000",
      "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
      "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
      "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
      "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
      "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    ];
    expect([...(smallOrderKeys("Ed25519") ?? [])].sort()).toEqual(libsodium.sort());
    expect(smallOrderKeys("Ed448")?.size).toBe(5);
  });

  test("Ed25519 and Ed448 keys of small order, with either sign bit, refuse every token forged for them", async () => {
    const smallOrder = (["Ed25519", "Ed448"] as const).flatMap((crv) =>
      [...(smallOrderKeys(crv) ?? [])].flatMap((hex) => {
        const key = Buffer.from(hex, "hex");
        const negative = Buffer.from(key);
        negative[key.length - 1] = (negative[key.length - 1] ?? 0) | 0x80;
        return [key, negative].map((x) => ({ crv, x }));
      }),
    );
    const keys = smallOrder.map(({ crv, x }, index) => ({
      kty: "OKP",
      crv,
      x: base64url(x),
      kid: `small-${index}`,
    }));
    const send = functionServing([...keys, goodJwk]);
    // R = the identity (y = 1), S = 0: verifies under a key of order n for every message whose
    // challenge is a multiple of n, a quarter to an eighth of them. Thirty tokens per key.
    for (const [index, { crv }] of smallOrder.entries()) {
      const size = crv === "Ed25519" ? 32 : 57;
      const identity = Buffer.alloc(size);
      identity[0] = 1;
      for (let attempt = 0; attempt < 30; attempt++) {
        const token = forgedToken("EdDSA", `small-${index}`, () =>
          Buffer.concat([identity, Buffer.alloc(size)]),
        );
        const result = await send(token);
        expectKeyCannotBeUsed(result, new RegExp(`point of small order on ${crv}`));
      }
    }
    expect(leftOutLines()).toHaveLength(smallOrder.length);
    expect((await send(tokenOf(good.privateKey, "RS256", "good"))).statusCode).toBe(200);
  });
});

describe("a kid shared by keys of different types (RFC 7517 §4.5)", () => {
  test("an RS256 token of the RSA key and an ES256 token of the EC key both answer 200", async () => {
    const send = functionServing([
      { ...ecJwk, kid: "shared" },
      { ...goodJwk, kid: "shared" },
    ]);
    expect((await send(tokenOf(good.privateKey, "RS256", "shared"))).statusCode).toBe(200);
    expect((await send(tokenOf(ec.privateKey, "ES256", "shared"))).statusCode).toBe(200);
    // An alg neither key fits is still refused.
    const eddsa = generateKeyPairSync("ed25519");
    const other = expectErrorAnswer(await send(tokenOf(eddsa.privateKey, "EdDSA", "shared")), 401);
    expect(other.message).toBe("the token is invalid: signature algorithm not allowed");
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
    expect((await send(tokenOf(ec.privateKey, "ES256", "twice"))).statusCode).toBe(200);
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
