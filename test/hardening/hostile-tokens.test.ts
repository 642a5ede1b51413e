/**
 * Every hostile token is refused, through the production handler: a corpus generated from a seed (the one
 * the jose differential test drew from, until aws-jwt-verify replaced the verifier it compared) of tampered
 * bytes, alg confusion (HS* with the public key as the secret, none, PS*, an alg the named key does not
 * fit), kids never published, claims beyond the policy or of the wrong type, encodings no verifier should
 * take, weak-key forgeries, and tokens of keys left out of the key set. The key set holds keys of every
 * type; a control share of valid tokens of every alg must be accepted, so that refusing all fails too.
 * Refused means 400, 401, 403, or the 503 of the refetch window for an unknown kid: never 200 or a 500.
 * `npm run fuzz` runs a larger corpus; FUZZ_SEED explores another one.
 */
import {
  constants,
  createHmac,
  createPublicKey,
  type KeyObject,
  type KeyPairKeyObjectResult,
  sign,
} from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { Handler } from "../../lambda/http/create-handler.ts";
import { LOCAL_CLIENT_ID } from "../../local/token-issuer.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { type Harness, startHarness, TEST_ISSUER } from "../../support/harness.ts";
import {
  accessTokenClaims,
  base64url,
  generateKeys,
  jwsSignature,
  pkcs1Encoding,
} from "../support/forged-tokens.ts";
import { fuzzRuns, fuzzTimeoutMs } from "../support/fuzz.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 24_2026);
const RUNS = fuzzRuns(800, 0.05);
const AUDIENCE = "plant-store-api";
const ALGS = ["RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "EdDSA"];
const NOW = Math.floor(Date.now() / 1000);

const pair = (type: "rsa" | "ec" | "ed25519" | "ed448", option?: number | string) =>
  type === "rsa"
    ? generateKeys("rsa", { modulusLength: Number(option ?? 2048) })
    : type === "ec"
      ? generateKeys("ec", { namedCurve: String(option) })
      : generateKeys(type as "ed25519");
const jwkOf = (key: KeyObject, members: object) => ({ ...key.export({ format: "jwk" }), ...members });

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  /** The algs its valid tokens are signed under; none for a key the function leaves out of the set. */
  algs: string[];
  publicJwk: object;
}

const key = async (
  kid: string,
  keyPair: KeyPairKeyObjectResult | Promise<KeyPairKeyObjectResult>,
  algs: string[],
  members: object = {},
): Promise<SigningKey> => {
  const { publicKey, privateKey } = await keyPair;
  return { kid, privateKey, algs, publicJwk: jwkOf(publicKey, { kid, ...members }) };
};
const [rsa, twice] = await Promise.all([pair("rsa"), pair("rsa")]);
const KEYS: SigningKey[] = await Promise.all([
  key("rsa", rsa, ["RS256"], { alg: "RS256", use: "sig" }),
  key("rsa-any", pair("rsa", 3072), ["RS256", "RS384", "RS512"]),
  key("p256", pair("ec", "P-256"), ["ES256"], { alg: "ES256" }),
  key("p384", pair("ec", "P-384"), ["ES384"]),
  key("p521", pair("ec", "P-521"), ["ES512"], { use: "sig" }),
  key("ed25519", pair("ed25519"), ["EdDSA"], { alg: "EdDSA" }),
  key("ed448", pair("ed448"), ["EdDSA"]),
  // Left out of the key set, each with its reason: their well-signed tokens are refused.
  key("twice", twice, [], {}),
  key("twice", pair("rsa"), []).then((other) => ({ ...other, privateKey: twice.privateKey })),
  key("rsa-1024", pair("rsa", 1024), []),
  key("rsa-enc", pair("rsa"), [], { use: "enc" }),
  key("alg-null", pair("rsa"), [], { alg: null }),
  {
    kid: "private-d",
    privateKey: rsa.privateKey,
    algs: [],
    publicJwk: jwkOf(rsa.privateKey, { kid: "private-d" }),
  },
  key("ext-string", pair("rsa"), [], { ext: "true" }),
  key("ops-mixed", pair("rsa"), [], { key_ops: ["verify", "sign"] }),
]);
const KEY_SET = [
  ...KEYS.map((entry) => entry.publicJwk),
  { kty: "RSA", kid: "rsa-e1", n: jwkOf(rsa.publicKey, {}).n, e: "AQ" },
];

interface Recipe {
  kind: string;
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  sign: (input: string) => Buffer;
  reshape?: (token: string) => string;
  claimsBytes?: Buffer;
}

const goodClaims = () => accessTokenClaims({ aud: AUDIENCE, iat: NOW - 60, exp: NOW + 3600 });
const signedBy = (privateKey: KeyObject, alg: string) => (input: string) => {
  if (alg === "EdDSA" && privateKey.asymmetricKeyType === "ed448")
    return sign(null, Buffer.from(input), privateKey);
  const signature = jwsSignature(alg, privateKey, input);
  return signature === undefined ? Buffer.from("no such signature") : Buffer.from(signature, "base64url");
};

function compact(recipe: Recipe): string {
  const input = `${base64url(JSON.stringify(recipe.header))}.${base64url(recipe.claimsBytes ?? JSON.stringify(recipe.claims))}`;
  const token = `${input}.${base64url(recipe.sign(input))}`;
  return recipe.reshape ? recipe.reshape(token) : token;
}

const usable = KEYS.filter((entry) => entry.algs.length > 0);
const keyAndAlg = fc
  .constantFrom(...usable)
  .chain((entry) => fc.constantFrom(...entry.algs).map((alg) => ({ entry, alg })));
const validRecipe = ({ entry, alg }: { entry: SigningKey; alg: string }): Recipe => ({
  kind: "valid",
  header: { alg, kid: entry.kid, typ: "JWT" },
  claims: goodClaims(),
  sign: signedBy(entry.privateKey, alg),
});
const valid = keyAndAlg.map(validRecipe);

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const tampered = fc.tuple(valid, fc.nat({ max: 2 }), fc.nat(), fc.nat({ max: 63 })).map(
  ([recipe, segment, position, replacement]): Recipe => ({
    ...recipe,
    kind: "tampered",
    reshape: (token) => {
      const parts = token.split(".");
      const part = parts[segment] ?? "";
      const index = position % part.length;
      const changed = (to: string) => `${part.slice(0, index)}${to}${part.slice(index + 1)}`;
      let character = BASE64URL[replacement] ?? "A";
      // A change only to bits of the last character no byte holds spells the same bytes: flip its top bit.
      if (Buffer.from(changed(character), "base64url").equals(Buffer.from(part, "base64url"))) {
        character = BASE64URL[BASE64URL.indexOf(part[index] ?? "A") ^ 0b100000] ?? "A";
      }
      parts[segment] = changed(character);
      return parts.join(".");
    },
  }),
);

const secretsOf = (privateKey: KeyObject) => {
  const publicKey = createPublicKey(privateKey);
  return [
    publicKey.export({ type: "spki", format: "pem" }),
    publicKey.export({ type: "spki", format: "der" }),
    JSON.stringify(publicKey.export({ format: "jwk" })),
  ];
};
const algConfusion = fc.oneof(
  fc.tuple(fc.constantFrom(...KEYS), fc.constantFrom("HS256", "HS384", "HS512"), fc.nat({ max: 2 })).map(
    ([entry, alg, secret]): Recipe => ({
      kind: "HMAC with the public key",
      header: { alg, kid: entry.kid },
      claims: goodClaims(),
      sign: (input) =>
        createHmac(`sha${alg.slice(2)}`, secretsOf(entry.privateKey)[secret] ?? "")
          .update(input)
          .digest(),
    }),
  ),
  fc.tuple(keyAndAlg, fc.constantFrom("none", "None", "NONE"), fc.boolean()).map(
    ([{ entry, alg }, none, pasted]): Recipe => ({
      kind: "none",
      header: { alg: none, kid: entry.kid },
      claims: goodClaims(),
      sign: pasted ? signedBy(entry.privateKey, alg) : () => Buffer.alloc(0),
    }),
  ),
  fc.constantFrom("PS256", "PS384", "PS512").map(
    (alg): Recipe => ({
      kind: "PS*",
      header: { alg, kid: "rsa-any" },
      claims: goodClaims(),
      sign: (input) =>
        sign(`sha${alg.slice(2)}`, Buffer.from(input), {
          key: rsa.privateKey,
          padding: constants.RSA_PKCS1_PSS_PADDING,
        }),
    }),
  ),
  // Mostly an alg of the key's own family (ES384 on a P-256 key: aws-jwt-verify alone would take it).
  fc
    .constantFrom(...usable)
    .chain((entry) =>
      fc.tuple(
        fc.constant(entry),
        fc.oneof(
          {
            weight: 3,
            arbitrary: fc.constantFrom(
              ...ALGS.filter((alg) => alg.slice(0, 2) === entry.algs[0]?.slice(0, 2)),
            ),
          },
          { weight: 1, arbitrary: fc.constantFrom(...ALGS, "ES256K", "Ed25519", "RS1") },
        ),
      ),
    )
    .filter(([entry, alg]) => !entry.algs.includes(alg))
    .map(
      ([entry, alg]): Recipe => ({
        kind: "an alg its key does not fit",
        header: { alg, kid: entry.kid },
        claims: goodClaims(),
        sign: signedBy(entry.privateKey, alg),
      }),
    ),
);

const kids = fc
  .tuple(valid, fc.constantFrom<unknown>(undefined, "unknown-kid", "", 7, null, ["rsa"], "RSA", "p256 "))
  .map(([recipe, kid]): Recipe => {
    const { kid: _named, ...header } = recipe.header;
    return { ...recipe, kind: "kid", header: kid === undefined ? header : { ...header, kid } };
  });

/** Values each of which refuses a token on its own. */
const HOSTILE_CLAIMS: Record<string, unknown[]> = {
  iss: [undefined, `${TEST_ISSUER}/`, "", null],
  sub: [5, null, ["user-1"]],
  aud: [undefined, ["other"], "other", [], 5, [5]],
  client_id: [undefined, "another-client", 7, [LOCAL_CLIENT_ID]],
  scope: [undefined, "plants/read", "", ["plants/write"], 1],
  exp: [undefined, "later", null, 1e300, -1e300, 8.64e12 + 1, NOW - 6, NOW - 3600],
  nbf: ["now", 1e300, -8.64e12 - 1, NOW + 60],
  iat: ["then", null],
  jti: [5, null],
};
const claims = fc
  .tuple(valid, fc.constantFrom(...Object.keys(HOSTILE_CLAIMS)))
  .chain(([recipe, claim]) =>
    fc.constantFrom(...(HOSTILE_CLAIMS[claim] ?? [])).map((value) => ({ recipe, claim, value })),
  )
  .map(({ recipe, claim, value }): Recipe => {
    const edited: Record<string, unknown> = { ...recipe.claims, [claim]: value };
    if (value === undefined) delete edited[claim];
    return { ...recipe, kind: `claim ${claim}`, claims: edited };
  });

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const encodings = fc.tuple(valid, fc.constantFrom("base64", "claims BOM", "space in token", "JWE")).map(
  ([recipe, how]): Recipe => ({
    ...recipe,
    kind: `encoding ${how}`,
    ...(how === "claims BOM"
      ? { claimsBytes: Buffer.concat([BOM, Buffer.from(JSON.stringify(recipe.claims))]) }
      : {}),
    reshape:
      how === "base64"
        ? (token) => (/[-_]/.test(token) ? token.replaceAll("-", "+").replaceAll("_", "/") : `${token}+`)
        : how === "space in token"
          ? (token) => `${token.slice(0, 10)} ${token.slice(10)}`
          : how === "JWE"
            ? (token) => `${token}.${token.split(".")[1]}.x`
            : undefined,
  }),
);

const leftOut = fc.constantFrom(...KEYS.filter((entry) => entry.algs.length === 0)).map(
  (entry): Recipe => ({
    kind: `left-out key ${entry.kid}`,
    header: { alg: "RS256", kid: entry.kid },
    claims: goodClaims(),
    sign: signedBy(entry.privateKey, "RS256"),
  }),
);
const weakKey = fc.nat().map(
  (jti): Recipe => ({
    kind: "weak key (e = 1) forgery",
    header: { alg: "RS256", kid: "rsa-e1" },
    claims: { ...goodClaims(), jti: String(jti) },
    sign: (input) => pkcs1Encoding(input, 256),
  }),
);

const hostile = fc.oneof(tampered, algConfusion, kids, claims, encodings, leftOut, weakKey);

let harness: Harness;
let handler: Handler;
let nextId = 1;

beforeAll(async () => {
  harness = await startHarness({ JWT_AUDIENCE: AUDIENCE });
  harness.jwks.setKeys({ keys: KEY_SET });
  handler = harness.handler;
});
afterAll(() => harness.close());

async function statusOf(token: string): Promise<number> {
  const result = await handler(apiGatewayEvent("2.0", { token, body: `{"id":${nextId++},"name":"Fern"}` }));
  const unknownKid =
    result.statusCode === 503 && result.body.includes("not among the issuer's keys as last fetched");
  return unknownKid ? 401 : result.statusCode;
}

test(
  `${RUNS} hostile tokens from seed ${SEED} are all refused; valid ones of every alg are accepted`,
  async () => {
    const accepted: string[] = [];
    const kinds = new Set<string>();
    for (const recipe of fc.sample(hostile, { numRuns: RUNS, seed: SEED })) {
      const token = compact(recipe);
      const status = await statusOf(token);
      kinds.add(recipe.kind.split(" ")[0] ?? "");
      if (![400, 401, 403].includes(status)) accepted.push(`${recipe.kind} (${status}): ${token}`);
    }
    expect(accepted, "hostile tokens not refused").toEqual([]);
    expect(kinds.size).toBeGreaterThanOrEqual(8);
    // Every alg of every key in the set, keys with an alg member and without: each accepted.
    for (const recipe of usable.flatMap((entry) => entry.algs.map((alg) => validRecipe({ entry, alg })))) {
      expect(await statusOf(compact(recipe)), `${recipe.header.alg} by ${recipe.header.kid}`).toBe(200);
    }
  },
  fuzzTimeoutMs(RUNS, 20),
);
