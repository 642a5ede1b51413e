/**
 * The token check against jose (panva), differentially: a corpus generated from a seed (valid tokens of
 * every algorithm and key type, tampered bytes, alg confusion, kid cases, claims at and beyond their
 * edges, non-canonical encodings, weak and malformed keys) is decided by the production handler and by
 * jose's jwtVerify over the same key set with the same policy. Every disagreement must be one of
 * INTENDED_DIFFERENCES, each with its reason; any other fails, and so does an entry no token needed.
 * `npm run fuzz` runs a larger corpus; FUZZ_SEED explores another one.
 */
import {
  constants,
  createHmac,
  createPublicKey,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
  sign,
} from "node:crypto";
import fc from "fast-check";
import { createLocalJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createAuthenticator } from "../../lambda/auth/authenticate.ts";
import { CLOCK_SKEW_SECONDS } from "../../lambda/auth/claims.ts";
import { readConfig } from "../../lambda/config.ts";
import { DEFAULT_REQUIRED_SCOPE } from "../../lambda/defaults.ts";
import { createHandler, type Handler } from "../../lambda/http/create-handler.ts";
import { LOCAL_CLIENT_ID } from "../../local/token-issuer.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { type Harness, startHarness, TEST_ISSUER } from "../../support/harness.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { base64url, jwsSignature, pkcs1Encoding } from "../support/forged-tokens.ts";
import { fuzzRuns, fuzzTimeoutMs } from "../support/fuzz.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 24_2026);
const RUNS = fuzzRuns(800, 0.05);
const AUDIENCE = "plant-store-api";
/** The API's algorithm list: RS256, RS384 and RS512 only (lambda/auth/jws.ts). */
const ALGORITHMS = ["RS256", "RS384", "RS512"];
/**
 * The algorithms jose is given: the API's and the ES* and EdDSA ones it refuses, which jose verifies, so
 * that the corpus holds well-signed tokens of both kinds and the difference stays in view.
 */
const JOSE_ALGORITHMS = [...ALGORITHMS, "ES256", "ES384", "ES512", "EdDSA"];
/** A whole second, frozen for both verifiers, so that the edges of exp and nbf are decided alike. */
const NOW = 1_795_000_000;

type Decision = "accept" | "refuse";

// ---- The issuer's key set ------------------------------------------------------------------------

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  /** The algs the key signs under in valid tokens. */
  algs: string[];
}

const pair = (type: "rsa" | "ec" | "ed25519" | "ed448", option?: number | string) =>
  type === "rsa"
    ? generateKeyPairSync("rsa", { modulusLength: Number(option ?? 2048) })
    : type === "ec"
      ? generateKeyPairSync("ec", { namedCurve: String(option) })
      : type === "ed25519"
        ? generateKeyPairSync("ed25519")
        : generateKeyPairSync("ed448");

const rsa = pair("rsa");
const rsaLarge = pair("rsa", 3072);
const p256 = pair("ec", "P-256");
const p384 = pair("ec", "P-384");
const p521 = pair("ec", "P-521");
const ed25519 = pair("ed25519");
const ed448 = pair("ed448");
const sharedEc = pair("ec", "P-256");
const sharedRsa = pair("rsa");
const twiceA = pair("rsa");
const twiceB = pair("rsa");
const rsa1024 = pair("rsa", 1024);
const malformed = pair("rsa");
const publishedD = pair("rsa");
const publishedP = pair("rsa");
const extString = pair("rsa");
const opsTwice = pair("rsa");
const opsMixed = pair("rsa");

const jwkOf = (key: KeyObject, members: object): JsonWebKey => ({
  ...key.export({ format: "jwk" }),
  ...members,
});
const rsaJwk = jwkOf(rsa.publicKey, {});

/**
 * The key set both verifiers are given, and the private keys behind it. Its EC and OKP keys the function
 * leaves out (it verifies RS256, RS384 and RS512 only); jose verifies with them.
 */
const KEY_SET: JsonWebKey[] = [
  jwkOf(rsa.publicKey, { kid: "rsa", alg: "RS256", use: "sig" }),
  jwkOf(rsaLarge.publicKey, { kid: "rsa-any" }),
  jwkOf(p256.publicKey, { kid: "p256", alg: "ES256" }),
  jwkOf(p384.publicKey, { kid: "p384" }),
  jwkOf(p521.publicKey, { kid: "p521", use: "sig" }),
  jwkOf(ed25519.publicKey, { kid: "ed25519", alg: "EdDSA" }),
  jwkOf(ed448.publicKey, { kid: "ed448" }),
  jwkOf(sharedEc.publicKey, { kid: "shared" }),
  jwkOf(sharedRsa.publicKey, { kid: "shared" }),
  jwkOf(twiceA.publicKey, { kid: "twice" }),
  jwkOf(twiceB.publicKey, { kid: "twice" }),
  jwkOf(rsa1024.publicKey, { kid: "rsa-1024" }),
  jwkOf(rsaLarge.publicKey, { kid: "rsa-enc", use: "enc" }),
  jwkOf(malformed.publicKey, { kid: "alg-null", alg: null }),
  { kty: "RSA", kid: "rsa-e1", n: rsaJwk.n, e: base64url(Buffer.from([1])) },
  // Entries that publish a private member, or RFC 7517 §4.3 metadata jose refuses.
  jwkOf(publishedD.privateKey, { kid: "private-d" }),
  {
    ...jwkOf(publishedP.publicKey, { kid: "private-p" }),
    p: publishedP.privateKey.export({ format: "jwk" }).p,
  },
  jwkOf(extString.publicKey, { kid: "ext-string", ext: "true" }),
  jwkOf(opsTwice.publicKey, { kid: "ops-twice", key_ops: ["verify", "verify"] }),
  jwkOf(opsMixed.publicKey, { kid: "ops-mixed", key_ops: ["verify", "sign"] }),
];

const SIGNING_KEYS: SigningKey[] = [
  { kid: "rsa", privateKey: rsa.privateKey, algs: ["RS256"] },
  { kid: "rsa-any", privateKey: rsaLarge.privateKey, algs: ["RS256", "RS384", "RS512"] },
  { kid: "p256", privateKey: p256.privateKey, algs: ["ES256"] },
  { kid: "p384", privateKey: p384.privateKey, algs: ["ES384"] },
  { kid: "p521", privateKey: p521.privateKey, algs: ["ES512"] },
  { kid: "ed25519", privateKey: ed25519.privateKey, algs: ["EdDSA"] },
  { kid: "ed448", privateKey: ed448.privateKey, algs: ["EdDSA"] },
  { kid: "shared", privateKey: sharedEc.privateKey, algs: ["ES256"] },
  { kid: "shared", privateKey: sharedRsa.privateKey, algs: ["RS256", "RS512"] },
  { kid: "twice", privateKey: twiceA.privateKey, algs: ["RS256"] },
  { kid: "rsa-1024", privateKey: rsa1024.privateKey, algs: ["RS256"] },
  { kid: "rsa-enc", privateKey: rsaLarge.privateKey, algs: ["RS256"] },
  { kid: "alg-null", privateKey: malformed.privateKey, algs: ["RS256"] },
  { kid: "private-d", privateKey: publishedD.privateKey, algs: ["RS256"] },
  { kid: "private-p", privateKey: publishedP.privateKey, algs: ["RS256"] },
  { kid: "ext-string", privateKey: extString.privateKey, algs: ["RS256"] },
  { kid: "ops-twice", privateKey: opsTwice.privateKey, algs: ["RS256"] },
  { kid: "ops-mixed", privateKey: opsMixed.privateKey, algs: ["RS256"] },
];

/** The kid of a key that is weak (e = 1): only a forgery can name it. */
const WEAK_KID = "rsa-e1";

// ---- Tokens --------------------------------------------------------------------------------------

/** What a token is made of; `bytes` overrides a segment's exact bytes (a BOM, bad UTF-8, odd JSON). */
interface Recipe {
  category: "valid" | "tampered" | "alg confusion" | "kid" | "claims" | "encoding" | "weak key";
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  headerBytes?: Buffer;
  claimsBytes?: Buffer;
  sign: (input: string) => Buffer;
  /** A change to the finished token: a character replaced, padding, another alphabet. */
  reshape?: (token: string) => string;
  /** What the case is about, for the list of intended differences. */
  notes: string[];
}

function goodClaims(): Record<string, unknown> {
  return {
    iss: TEST_ISSUER,
    sub: "user-1",
    aud: AUDIENCE,
    client_id: LOCAL_CLIENT_ID,
    scope: DEFAULT_REQUIRED_SCOPE,
    iat: NOW - 60,
    exp: NOW + 3600,
    jti: "a",
  };
}

function signedBy(key: KeyObject, alg: string): (input: string) => Buffer {
  return (input) => {
    if (alg === "EdDSA" && key.asymmetricKeyType === "ed448") return sign(null, Buffer.from(input), key);
    const signature = jwsSignature(alg, key, input);
    return signature === undefined ? Buffer.from("no such signature") : Buffer.from(signature, "base64url");
  };
}

function compact(recipe: Recipe): string {
  const header = recipe.headerBytes ?? Buffer.from(JSON.stringify(recipe.header));
  const claims = recipe.claimsBytes ?? Buffer.from(JSON.stringify(recipe.claims));
  const input = `${base64url(header)}.${base64url(claims)}`;
  const token = `${input}.${base64url(recipe.sign(input))}`;
  return recipe.reshape ? recipe.reshape(token) : token;
}

const signingKey = fc.constantFrom(...SIGNING_KEYS);
const keyAndAlg = signingKey.chain((key) => fc.constantFrom(...key.algs).map((alg) => ({ key, alg })));

const valid = keyAndAlg.map(
  ({ key, alg }): Recipe => ({
    category: "valid",
    header: { alg, kid: key.kid, typ: "JWT" },
    claims: goodClaims(),
    sign: signedBy(key.privateKey, alg),
    notes: [`kid:${key.kid}`, `type:${key.privateKey.asymmetricKeyType}`],
  }),
);

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const tampered = fc.tuple(valid, fc.nat({ max: 2 }), fc.nat(), fc.nat({ max: 63 })).map(
  ([recipe, segment, position, replacement]): Recipe => ({
    ...recipe,
    category: "tampered",
    reshape: (token) => {
      const parts = token.split(".");
      const part = parts[segment] ?? "";
      const index = position % part.length;
      let character = BASE64URL[replacement] ?? "A";
      if (character === part[index]) character = character === "A" ? "B" : "A";
      const changed = (to: string) => `${part.slice(0, index)}${to}${part.slice(index + 1)}`;
      // A segment's last character may carry bits no byte holds: changing only those spells the same
      // bytes again, which is "one spelling per token", not a tampered token. Its top bit always counts.
      if (Buffer.from(changed(character), "base64url").equals(Buffer.from(part, "base64url"))) {
        character = BASE64URL[BASE64URL.indexOf(part[index] ?? "A") ^ 0b100000] ?? "A";
      }
      parts[segment] = changed(character);
      return parts.join(".");
    },
  }),
);

const publicKeySecrets = (key: KeyObject): Buffer[] => [
  Buffer.from(key.export({ type: "spki", format: "pem" })),
  key.export({ type: "spki", format: "der" }),
  Buffer.from(JSON.stringify(key.export({ format: "jwk" }))),
];

const algConfusion = fc.oneof(
  // HS* with the issuer's public key as the HMAC secret.
  fc
    .tuple(
      fc.constantFrom(...SIGNING_KEYS),
      fc.constantFrom("HS256", "HS384", "HS512"),
      fc.nat({ max: 2 }),
      fc.boolean(),
    )
    .map(
      ([key, alg, secretIndex, withKid]): Recipe => ({
        category: "alg confusion",
        header: { alg, ...(withKid ? { kid: key.kid } : {}) },
        claims: goodClaims(),
        sign: (input) => {
          const secret = publicKeySecrets(createPublicKey(key.privateKey))[secretIndex] ?? Buffer.alloc(0);
          return createHmac(`sha${alg.slice(2)}`, secret)
            .update(input)
            .digest();
        },
        notes: withKid ? [] : ["no kid"],
      }),
    ),
  // none, with no signature or a real one pasted on.
  fc.tuple(keyAndAlg, fc.constantFrom("none", "None", "NONE"), fc.boolean()).map(
    ([{ key, alg }, none, pasted]): Recipe => ({
      category: "alg confusion",
      header: { alg: none, kid: key.kid },
      claims: goodClaims(),
      sign: pasted ? signedBy(key.privateKey, alg) : () => Buffer.alloc(0),
      notes: [],
    }),
  ),
  // PS* by an RSA key: a valid RSASSA-PSS signature, of an alg not on the API's list.
  fc
    .tuple(fc.constantFrom("rsa", "rsa-any", "shared"), fc.constantFrom("PS256", "PS384", "PS512"))
    .map(([kid, alg]): Recipe => {
      const key = SIGNING_KEYS.find(
        (candidate) => candidate.kid === kid && candidate.algs[0]?.startsWith("RS"),
      );
      const bits = alg.slice(2);
      return {
        category: "alg confusion",
        header: { alg, kid },
        claims: goodClaims(),
        sign: (input) =>
          sign(`sha${bits}`, Buffer.from(input), {
            key: key?.privateKey ?? rsa.privateKey,
            padding: constants.RSA_PKCS1_PSS_PADDING,
            saltLength: Number(bits) / 8,
          }),
        notes: [],
      };
    }),
  // An alg that does not fit the key it names (mostly one of its family: RS384 on an RS256 key, ES384
  // on a P-256 key), signed by that key wherever node:crypto can; of jose's algs, so ES* and EdDSA too.
  signingKey
    .chain((key) =>
      fc.tuple(
        fc.constant(key),
        fc.oneof(
          {
            weight: 3,
            arbitrary: fc.constantFrom(
              ...JOSE_ALGORITHMS.filter((alg) => alg.slice(0, 2) === key.algs[0]?.slice(0, 2)),
            ),
          },
          { weight: 1, arbitrary: fc.constantFrom(...JOSE_ALGORITHMS, "ES256K", "Ed25519", "RS1") },
        ),
      ),
    )
    .map(
      ([key, alg]): Recipe => ({
        category: "alg confusion",
        header: { alg, kid: key.kid },
        claims: goodClaims(),
        sign: signedBy(key.privateKey, alg),
        notes: [`kid:${key.kid}`, `type:${key.privateKey.asymmetricKeyType}`],
      }),
    ),
);

/**
 * Keys that are the only ones of the key set their alg fits (ES384, ES512): a token without a kid finds
 * them in jose, so a kid-less token is sure to test this API's rule however many keys the set holds. No
 * RSA key is alone for its alg (several publish none), and jose refuses a kid-less token that several
 * keys fit.
 */
const keyAloneForItsAlg = fc
  .constantFrom(...SIGNING_KEYS.filter(({ kid }) => kid === "p384" || kid === "p521"))
  .map((key) => ({ key, alg: key.algs[0] ?? "" }));

const kidCases = fc
  .tuple(
    fc.oneof(keyAndAlg, keyAloneForItsAlg),
    fc.constantFrom<unknown>(undefined, "unknown-kid", "", 7, null, ["rsa"], "RSA", "p256 ", "rsa-any"),
  )
  .map(
    ([{ key, alg }, kid]): Recipe => ({
      category: "kid",
      header: { alg, typ: "JWT", ...(kid === undefined ? {} : { kid }) },
      claims: goodClaims(),
      sign: signedBy(key.privateKey, alg),
      notes: kid === undefined ? ["no kid", `type:${key.privateKey.asymmetricKeyType}`] : [],
    }),
  );

/** Values at and beyond each claim's edges, of the right type and of others. */
const CLAIM_VALUES: Record<string, fc.Arbitrary<unknown>> = {
  iss: fc.constantFrom<unknown>(undefined, `${TEST_ISSUER}/`, "", null),
  sub: fc.constantFrom<unknown>(undefined, 5, null, ["user-1"]),
  aud: fc.constantFrom<unknown>(undefined, [AUDIENCE, "other"], ["other"], "other", [], 5, [5]),
  client_id: fc.constantFrom<unknown>(undefined, "another-client", 7, [LOCAL_CLIENT_ID]),
  scope: fc.constantFrom<unknown>(
    undefined,
    "plants/read",
    `openid ${DEFAULT_REQUIRED_SCOPE}`,
    "",
    [DEFAULT_REQUIRED_SCOPE],
    1,
  ),
  scp: fc.constantFrom<unknown>([DEFAULT_REQUIRED_SCOPE], DEFAULT_REQUIRED_SCOPE, ["plants/read"]),
  exp: fc.oneof(
    fc.constantFrom<unknown>(undefined, "later", null, 1e300, -1e300, 8.64e12, 8.64e12 + 1),
    fc.integer({ min: -2, max: 2 }).map((offset) => NOW - CLOCK_SKEW_SECONDS + offset),
    fc.integer({ min: -2, max: 2 }).map((offset) => NOW - CLOCK_SKEW_SECONDS + offset),
    fc.double({ min: NOW - 10, max: NOW, noNaN: true }),
  ),
  nbf: fc.oneof(
    fc.constantFrom<unknown>("now", 1e300, -1e300, -8.64e12 - 1),
    fc.integer({ min: -2, max: 2 }).map((offset) => NOW + CLOCK_SKEW_SECONDS + offset),
  ),
  iat: fc.constantFrom<unknown>("then", NOW + 3600, 1e300, null),
  jti: fc.constantFrom<unknown>(5, null),
};

/** One or two claims changed: more would refuse nearly every token for several reasons at once. */
const claimEdits = fc
  .uniqueArray(fc.constantFrom(...Object.keys(CLAIM_VALUES)), { minLength: 1, maxLength: 2 })
  .chain((names) =>
    fc.tuple(
      ...names.map((name) =>
        (CLAIM_VALUES[name] as fc.Arbitrary<unknown>).map((value) => [name, value] as const),
      ),
    ),
  )
  .map((edits) => Object.fromEntries(edits));

const TYPED_CLAIMS: Record<string, (value: unknown) => boolean> = {
  sub: (value) => typeof value !== "string",
  jti: (value) => typeof value !== "string",
  scope: (value) => typeof value !== "string",
  exp: (value) => typeof value === "number" && Math.abs(value) > 8.64e12,
  nbf: (value) => typeof value === "number" && Math.abs(value) > 8.64e12,
};

const claims = fc.tuple(valid, claimEdits).map(([recipe, edits]): Recipe => {
  const edited = { ...recipe.claims };
  const notes = [...recipe.notes];
  for (const [claim, value] of Object.entries(edits)) {
    if (value === undefined) delete edited[claim];
    else edited[claim] = value;
    if (value !== undefined && TYPED_CLAIMS[claim]?.(value)) notes.push("claim type");
  }
  return { ...recipe, category: "claims", claims: edited, notes };
});

const encoding = fc
  .tuple(
    valid,
    fc.constantFrom(
      "padded",
      "stray bits",
      "base64",
      "header BOM",
      "claims BOM",
      "claims not UTF-8",
      "header whitespace",
      "duplicate alg",
      "space in token",
    ),
  )
  .map(([recipe, how]): Recipe => {
    const json = (value: object) => Buffer.from(JSON.stringify(value));
    const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
    const edited: Recipe = { ...recipe, category: "encoding", notes: [...recipe.notes, `encoding:${how}`] };
    switch (how) {
      case "padded":
        return {
          ...edited,
          reshape: (token) =>
            token
              .split(".")
              .map((part) => `${part}${"=".repeat((4 - (part.length % 4)) % 4)}`)
              .join("."),
        };
      case "stray bits":
        return { ...edited, reshape: strayBits };
      case "base64":
        return { ...edited, reshape: (token) => token.replaceAll("-", "+").replaceAll("_", "/") };
      case "header BOM":
        return { ...edited, headerBytes: Buffer.concat([BOM, json(recipe.header)]) };
      case "claims BOM":
        return { ...edited, claimsBytes: Buffer.concat([BOM, json(recipe.claims)]) };
      case "claims not UTF-8":
        return {
          ...edited,
          claimsBytes: Buffer.from(
            JSON.stringify({ ...recipe.claims, sub: "\u0000" }).replace("\\u0000", "\u00ff"),
            "latin1",
          ),
        };
      case "header whitespace":
        return { ...edited, headerBytes: Buffer.from(` \n${JSON.stringify(recipe.header, null, 2)}\t`) };
      case "duplicate alg":
        return {
          ...edited,
          headerBytes: Buffer.from(`{"alg":"HS256",${JSON.stringify(recipe.header).slice(1)}`),
        };
      default:
        return { ...edited, reshape: (token) => `${token.slice(0, 10)} ${token.slice(10)}` };
    }
  });

/** The last character of the signature with one of its unused low bits set: the same bytes, spelled otherwise. */
function strayBits(token: string): string {
  const last = token.at(-1) ?? "A";
  const unused = [0, 0, 15, 3][(token.length - token.lastIndexOf(".") - 1) % 4] ?? 0;
  const value = BASE64URL.indexOf(last);
  if (unused === 0 || (value & unused) === unused) return `${token}=`;
  return `${token.slice(0, -1)}${BASE64URL[value | 1]}`;
}

/** A token forged for a weak key: no private key, only its weakness (with e = 1, the padded digest). */
const weakKey = fc.nat().map(
  (jti): Recipe => ({
    category: "weak key",
    header: { alg: "RS256", kid: WEAK_KID },
    claims: { ...goodClaims(), jti: String(jti) },
    sign: (input) => pkcs1Encoding(input, 256),
    notes: [`kid:${WEAK_KID}`, "weak key"],
  }),
);

const recipe = fc.oneof(valid, tampered, algConfusion, kidCases, claims, encoding, weakKey);

// ---- The two verifiers -----------------------------------------------------------------------------

const joseKeySet = createLocalJWKSet({ keys: KEY_SET as never[] });

/** jose's decision under the API's policy: jwtVerify for what it checks, then client id and scope. */
async function joseDecides(token: string): Promise<Decision> {
  try {
    const { payload } = await jwtVerify(token, joseKeySet, {
      issuer: TEST_ISSUER,
      audience: AUDIENCE,
      algorithms: JOSE_ALGORITHMS,
      clockTolerance: CLOCK_SKEW_SECONDS,
      currentDate: new Date(NOW * 1000),
      requiredClaims: ["exp"],
    });
    if (payload.client_id !== LOCAL_CLIENT_ID) return "refuse";
    const scopes = [payload.scope, payload.scp].flatMap((claim) =>
      typeof claim === "string" ? claim.split(" ") : Array.isArray(claim) ? claim : [],
    );
    return scopes.includes(DEFAULT_REQUIRED_SCOPE) ? "accept" : "refuse";
  } catch {
    return "refuse";
  }
}

let harness: Harness;
let handler: Handler;
let nextId = 1;

/**
 * The function's decision, through the production handler: 200 accepts; 401 and 403 refuse, and 400
 * (a token with a space is no one Bearer credential).
 */
async function functionDecides(token: string): Promise<Decision> {
  const result = await handler(apiGatewayEvent("2.0", { token, body: `{"id":${nextId++},"name":"Fern"}` }));
  if (result.statusCode === 200) return "accept";
  // A kid the key set lacks (named, tampered or re-spelled): 401 for the token that fetched the key set
  // afresh, 503 for those inside the refetch window, which never closes on the frozen clock.
  const unknownKid =
    result.statusCode === 503 && result.body.includes("not among the issuer's keys as last fetched");
  if ([400, 401, 403].includes(result.statusCode) || unknownKid) return "refuse";
  throw new Error(`the function answered ${result.statusCode}: ${result.body}`);
}

// ---- Where they differ, on purpose ---------------------------------------------------------------

interface IntendedDifference {
  name: string;
  reason: string;
  function: Decision;
  jose: Decision;
  covers: (subject: Recipe) => boolean;
}

const noted = (note: string) => (subject: Recipe) => subject.notes.includes(note);

const INTENDED_DIFFERENCES: IntendedDifference[] = [
  {
    name: "a token must name its key",
    reason:
      "without a kid jose tries the one key that fits the alg; this API takes a key only by kid, so that a token never makes it search the key set, and an unknown kid is what triggers a refetch",
    function: "refuse",
    jose: "accept",
    covers: noted("no kid"),
  },
  {
    name: "RS256, RS384 and RS512 only",
    reason:
      "this API verifies RSA-signed tokens only: Cognito, the stack's issuer, signs RS256, as do the common OpenID providers by default, and ES256/384/512 and EdDSA would be code every cold start parses for issuers its users do not have. It refuses their tokens as an alg not allowed and leaves EC and OKP keys out of the key set; jose verifies them (all but Ed448)",
    function: "refuse",
    jose: "accept",
    covers: (subject) => /^(ES256|ES384|ES512|EdDSA)$/.test(String(subject.header.alg)),
  },
  {
    name: "typed claims",
    reason:
      "RFC 7519 §4.1 types sub and jti as strings and this API reads scope as one; jose checks neither, nor exp/nbf beyond what a Date can hold. This API refuses them before any key is used",
    function: "refuse",
    jose: "accept",
    covers: noted("claim type"),
  },
  {
    name: "weak keys",
    reason:
      "an RSA key with e = 1 verifies tokens forged with no private key (the signature is the padded digest); jose takes whatever the key set publishes, this API never trusts such a key",
    function: "refuse",
    jose: "accept",
    covers: noted("weak key"),
  },
  {
    name: "one spelling per token",
    reason:
      "RFC 7515 §2: base64url without padding; this API takes a segment only if it re-encodes to itself (no padding, no stray bits), so one token has one spelling; jose's decoder (atob) accepts both",
    function: "refuse",
    jose: "accept",
    covers: (subject) => noted("encoding:stray bits")(subject) || noted("encoding:padded")(subject),
  },
  {
    name: "no byte order mark",
    reason:
      "RFC 8259 §8.1: JSON text exchanged between systems MUST NOT begin with a BOM; jose's UTF-8 decoder drops it, this API refuses the segment as malformed",
    function: "refuse",
    jose: "accept",
    covers: (subject) => noted("encoding:header BOM")(subject) || noted("encoding:claims BOM")(subject),
  },
  {
    name: "every private member",
    reason:
      "jose refuses a key set entry as private only by its d; an entry publishing a prime (p, q), a CRT member or k has given its secret away as surely (the other prime follows from n), and this API never verifies with it",
    function: "refuse",
    jose: "accept",
    covers: noted("kid:private-p"),
  },
];

// ---- The test ------------------------------------------------------------------------------------

beforeAll(async () => {
  harness = await startHarness({ JWT_AUDIENCE: AUDIENCE });
  harness.jwks.setKeys({ keys: KEY_SET });
  // The production wiring's handler, store and policy, with an authenticator on a clock held at NOW.
  const clock = new FakeClock({ now: NOW * 1000 });
  const authenticate = createAuthenticator(readConfig(harness.environment), { clock });
  handler = createHandler({ ...harness.dependencies, authenticate });
});

afterAll(async () => {
  await harness.close();
});

describe("the function and jose decide every token alike, but for the intended differences", () => {
  test(
    `a corpus of ${RUNS} tokens from seed ${SEED}`,
    async () => {
      const unlisted: string[] = [];
      const used = new Map<string, number>();
      const categories = new Map<string, number>();
      const cases = fc.sample(recipe, { numRuns: RUNS, seed: SEED });
      for (const subject of cases) {
        const token = compact(subject);
        const [ours, theirs] = [await functionDecides(token), await joseDecides(token)];
        categories.set(subject.category, (categories.get(subject.category) ?? 0) + 1);
        if (ours === theirs) continue;
        const difference = INTENDED_DIFFERENCES.find(
          (entry) => entry.function === ours && entry.jose === theirs && entry.covers(subject),
        );
        if (difference === undefined) {
          unlisted.push(
            `${subject.category} [${subject.notes.join(", ")}]: function ${ours}, jose ${theirs}: ${token}`,
          );
        } else {
          used.set(difference.name, (used.get(difference.name) ?? 0) + 1);
        }
      }
      expect(unlisted, "disagreements on no list").toEqual([]);
      expect([...categories.keys()].sort()).toEqual([
        "alg confusion",
        "claims",
        "encoding",
        "kid",
        "tampered",
        "valid",
        "weak key",
      ]);
      // An entry no token needed is no longer known to be true: the corpus lost its case, or it is stale.
      const unneeded = INTENDED_DIFFERENCES.filter(({ name }) => !used.has(name)).map(({ name }) => name);
      expect(unneeded, `entries no token needed (needed: ${JSON.stringify([...used])})`).toEqual([]);
      expect(cases.filter((subject) => subject.category === "valid").length).toBeGreaterThan(10);
    },
    fuzzTimeoutMs(RUNS, 20),
  );
});
