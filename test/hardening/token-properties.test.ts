/**
 * Whatever a caller puts in a token, the production handler refuses it with 401 or 403, never a 5xx:
 * an issuer whose key set holds keys of every type (RSA, EC P-256/384/521, Ed25519), each with and
 * without `alg`, and tokens with any `alg` against any of them, times at and beyond what a Date can
 * hold, non-numbers for times, and signatures valid, cut short or random. Only RSA keys verify (the API
 * takes RS256, RS384 and RS512 only): the EC and OKP keys are left out, their tokens refused. The same key
 * set also holds weak RSA keys (weakKeys()), which no token is ever accepted under, and kids shared by
 * several keys: one by an EC and an RSA key, where the RSA key serves alone, one by two RSA keys, which
 * is ambiguous.
 */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { LOCAL_CLIENT_ID } from "../../local/token-issuer.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { type Harness, startHarness, TEST_ISSUER } from "../../support/harness.ts";
import { expectBearerChallenge, expectErrorAnswer } from "../support/answers.ts";
import {
  accessTokenClaims,
  base64url,
  jwsSignature,
  keysOfEveryType,
  type PublishedKey,
  signingInput,
  type WeakKey,
  weakKeys,
} from "../support/forged-tokens.ts";
import { fuzzRuns, fuzzTimeoutMs } from "../support/fuzz.ts";

const TOKEN_RUNS = fuzzRuns(600, 0.1);
const WEAK_KEY_RUNS = fuzzRuns(150, 0.02);
const SHARED_KID_RUNS = fuzzRuns(100, 0.02);

/** Seconds either side of 1970 beyond which `new Date(seconds * 1000)` is invalid. */
const LAST_DATE_SECONDS = 8.64e12;

let harness: Harness;
let keys: PublishedKey[];
let weak: WeakKey[];
let nextId = 1;

/** Keys published under a kid they share: an EC and an RSA key (RFC 7517 §4.5), and two RSA keys. */
const shared = {
  ec: generateKeyPairSync("ec", { namedCurve: "P-256" }),
  rsa: generateKeyPairSync("rsa", { modulusLength: 2048 }),
  secondRsa: generateKeyPairSync("rsa", { modulusLength: 2048 }),
};
const publicJwk = (key: KeyObject, kid: string) => ({ ...key.export({ format: "jwk" }), kid });

beforeAll(async () => {
  keys = keysOfEveryType();
  weak = weakKeys();
  harness = await startHarness({ JWT_AUDIENCE: "" });
  harness.jwks.setKeys({
    keys: [
      ...keys.map((key) => key.publicJwk),
      ...weak.map((key) => key.publicJwk),
      publicJwk(shared.ec.publicKey, "shared"),
      publicJwk(shared.rsa.publicKey, "shared"),
      publicJwk(shared.rsa.publicKey, "twice"),
      publicJwk(shared.secondRsa.publicKey, "twice"),
    ],
  });
});

afterAll(async () => {
  await harness.close();
});

function send(token: string): Promise<ApiGatewayResult> {
  return harness.handler(apiGatewayEvent("2.0", { token, body: `{"id":${nextId++},"name":"Fern"}` }));
}

/** A compact JWS over exactly `header` and `claims`, signed by `key` under the header's alg. */
function tokenSignedBy(key: PublishedKey, header: Record<string, unknown>, claims: Record<string, unknown>) {
  const input = signingInput(header, claims);
  return `${input}.${jwsSignature(String(header.alg), key.privateKey, input) ?? base64url("no such signature")}`;
}

function expectRefusal(result: ApiGatewayResult): void {
  expect([401, 403]).toContain(result.statusCode);
  expectErrorAnswer(result);
  expectBearerChallenge(result);
}

describe("control: a key set of every type, with and without alg", () => {
  test("a token each RSA key signed under its own alg is authenticated (200); an EC or Ed25519 key's is refused (401)", async () => {
    for (const key of keys) {
      const token = tokenSignedBy(key, { alg: key.naturalAlg, kid: key.kid }, accessTokenClaims());
      const result = await send(token);
      if (key.type === "RSA") expect(result.statusCode, key.kid).toBe(200);
      else {
        expect(expectErrorAnswer(result, 401).message, key.kid).toBe(
          "the token is invalid: signature algorithm not allowed",
        );
      }
    }
  });
});

describe("the forgeries of issue 16, each well signed by the key it names", () => {
  const mismatches = [
    ["ES256", "RSA-no-alg"],
    ["EdDSA", "RSA-no-alg"],
    ["RS256", "P-256-no-alg"],
    ["RS256", "Ed25519-no-alg"],
    ["ES384", "P-256-no-alg"],
    ["ES512", "P-256-no-alg"],
    ["ES256", "P-384-no-alg"],
    ["EdDSA", "P-256-no-alg"],
  ] as const;

  test.each(mismatches)("alg %s on key %s: 401 invalid_token", async (alg, kid) => {
    const key = keys.find((candidate) => candidate.kid === kid) as PublishedKey;
    const result = await send(tokenSignedBy(key, { alg, kid }, accessTokenClaims()));
    expectErrorAnswer(result, 401);
    expectBearerChallenge(result, "invalid_token");
  });

  test.each([
    ["exp", -9007199254740991],
    ["exp", -1e300],
    ["nbf", 1e300],
    ["nbf", LAST_DATE_SECONDS + 1],
    ["exp", -(LAST_DATE_SECONDS + 1)],
  ])("%s %d: 401 naming the claim", async (claim, seconds) => {
    const key = keys[0] as PublishedKey;
    const token = tokenSignedBy(
      key,
      { alg: key.naturalAlg, kid: key.kid },
      accessTokenClaims({ [claim]: seconds }),
    );
    const result = await send(token);
    expect(expectErrorAnswer(result, 401).message).toContain(claim);
    expectBearerChallenge(result, "invalid_token");
  });

  test("times at the last representable second are judged, not refused as out of range", async () => {
    const key = keys[0] as PublishedKey;
    const header = { alg: key.naturalAlg, kid: key.kid };
    const expired = await send(tokenSignedBy(key, header, accessTokenClaims({ exp: -LAST_DATE_SECONDS })));
    expect(expectErrorAnswer(expired, 401).message).toMatch(/expired/);
    const notYet = await send(tokenSignedBy(key, header, accessTokenClaims({ nbf: LAST_DATE_SECONDS })));
    expect(expectErrorAnswer(notYet, 401).message).toMatch(/not valid yet/);
  });
});

describe("any alg, key, time and signature", () => {
  const now = Math.floor(Date.now() / 1000);
  const time = fc.oneof(
    fc.constantFrom(
      now + 3600,
      now - 3600,
      0,
      -0.5,
      LAST_DATE_SECONDS,
      -LAST_DATE_SECONDS,
      LAST_DATE_SECONDS + 1,
      -(LAST_DATE_SECONDS + 1),
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
      1e300,
      -1e300,
      Number.MAX_VALUE,
      -Number.MAX_VALUE,
    ),
    fc.double(),
    fc.integer(),
    fc.oneof(fc.string(), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({})),
  );
  const alg = fc.oneof(
    fc.constantFrom("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "EdDSA"),
    fc.constantFrom("PS256", "HS256", "none", "ES256K", "Ed25519", "", "rs256"),
    fc.string({ maxLength: 12 }),
  );
  const signature = fc.oneof(
    fc.constant<"signed">("signed"),
    fc.nat({ max: 8 }).map((cut) => ({ cut })),
    fc
      .uint8Array({ maxLength: 600 })
      .chain((bytes) => fc.nat({ max: 3 }).map((trim) => ({ random: base64url(bytes).slice(trim) }))),
  );
  const forgery = fc.record({
    key: fc.nat({ max: 1000 }),
    alg: fc.option(alg, { nil: undefined }),
    exp: fc.option(time, { nil: undefined }),
    nbf: fc.option(time, { nil: undefined }),
    iat: fc.option(time, { nil: undefined }),
    wrongIssuer: fc.boolean(),
    signature,
  });

  test(
    "every token is refused with 401 or 403 and a challenge, never a 5xx",
    async () => {
      await fc.assert(
        fc.asyncProperty(forgery, async (forged) => {
          const key = keys[forged.key % keys.length] as PublishedKey;
          const header = { ...(forged.alg === undefined ? {} : { alg: forged.alg }), kid: key.kid };
          // No scope: a token that passes every check is a 403, so any 200 is a bug.
          const claims: Record<string, unknown> = {
            iss: forged.wrongIssuer ? `${TEST_ISSUER}/other` : TEST_ISSUER,
            client_id: LOCAL_CLIENT_ID,
            ...(forged.exp === undefined ? {} : { exp: forged.exp }),
            ...(forged.nbf === undefined ? {} : { nbf: forged.nbf }),
            ...(forged.iat === undefined ? {} : { iat: forged.iat }),
          };
          const signed = tokenSignedBy(key, header, claims);
          const [input] = signed.split(/\.(?=[^.]*$)/);
          const token =
            forged.signature === "signed"
              ? signed
              : "cut" in forged.signature
                ? signed.slice(0, Math.max(`${input}.`.length + 1, signed.length - forged.signature.cut))
                : `${input}.${forged.signature.random}`;
          expectRefusal(await send(token));
        }),
        { numRuns: TOKEN_RUNS },
      );
    },
    fuzzTimeoutMs(TOKEN_RUNS, 20),
  );
});

describe("weak keys and shared kids", () => {
  const signatureOf = fc.oneof(
    fc.constant<"forged">("forged"),
    fc.uint8Array({ minLength: 1, maxLength: 300 }).map((bytes) => ({ random: base64url(bytes) })),
  );

  test(
    "a token naming a weak key is refused (401, the key cannot be used) whatever its alg, claims and signature",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.nat({ max: 1000 }),
          fc.option(fc.constantFrom("RS256", "RS512", "ES256", "EdDSA"), { nil: undefined }),
          fc.string({ maxLength: 20 }),
          signatureOf,
          async (keyIndex, alg, jti, signature) => {
            const key = weak[keyIndex % weak.length] as WeakKey;
            // Claims that pass every check: only the key can refuse the token.
            const input = signingInput({ alg: alg ?? key.alg, kid: key.kid }, accessTokenClaims({ jti }));
            const token = `${input}.${signature === "forged" ? base64url(key.forge(input)) : signature.random}`;
            const result = await send(token);
            const { message } = expectErrorAnswer(result, 401);
            expectBearerChallenge(result, "invalid_token");
            // Under an RS alg the answer says why the key cannot be used; under ES256 or EdDSA, that the
            // alg is not allowed (the weak keys are RSA keys).
            expect(message).toMatch(
              (alg ?? key.alg).startsWith("RS")
                ? /^the token is invalid: the issuer's key it names cannot be used: /
                : /^the token is invalid: signature algorithm not allowed$/,
            );
          },
        ),
        { numRuns: WEAK_KEY_RUNS },
      );
    },
    fuzzTimeoutMs(WEAK_KEY_RUNS, 20),
  );

  test(
    "under a kid shared by an EC and an RSA key, a token is accepted exactly when the RSA key signed it under an RS alg",
    async () => {
      const algs = ["RS256", "RS384", "RS512", "ES256", "ES384", "EdDSA", "PS256"];
      await fc.assert(
        fc.asyncProperty(fc.constantFrom("ec", "rsa"), fc.constantFrom(...algs), async (signer, alg) => {
          const privateKey = signer === "ec" ? shared.ec.privateKey : shared.rsa.privateKey;
          const input = signingInput({ alg, kid: "shared" }, accessTokenClaims());
          const token = `${input}.${jwsSignature(alg, privateKey, input) ?? base64url("no such signature")}`;
          const fits = signer === "rsa" && /^RS/.test(alg);
          const result = await send(token);
          if (fits) expect(result.statusCode).toBe(200);
          else expectRefusal(result);
        }),
        { numRuns: SHARED_KID_RUNS },
      );
    },
    fuzzTimeoutMs(SHARED_KID_RUNS, 20),
  );

  test("under a kid two RSA keys share, every RSA token is refused as ambiguous, whichever key signed", async () => {
    for (const privateKey of [shared.rsa.privateKey, shared.secondRsa.privateKey]) {
      for (const alg of ["RS256", "RS384", "RS512"]) {
        const input = signingInput({ alg, kid: "twice" }, accessTokenClaims());
        const result = await send(`${input}.${jwsSignature(alg, privateKey, input)}`);
        expect(expectErrorAnswer(result, 401).message).toMatch(/more than one key of its alg's type/);
      }
    }
  });
});
