/**
 * The issuer's keys as the function holds them (lambda/auth/issuer-keys.ts), against a real loopback key-set
 * endpoint and tokens signed by real keys: keys delivered at deploy time serve a cold start without the
 * issuer; a background refresh after answers replaces them, so a dropped key stops verifying; a kid not held
 * fetches the set at most once per 10 s window; the issuer's faults answer 503 with Retry-After, never 401,
 * and never lock out tokens of the keys held. The fake clock moves the windows; token times are real.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import { createAuthenticator } from "../../lambda/auth/authenticate.ts";
import {
  createIssuerKeys,
  type IssuerKeysOptions,
  KEY_SET_REFETCH_INTERVAL_SECONDS,
  KEY_SET_REFRESH_INTERVAL_SECONDS,
} from "../../lambda/auth/issuer-keys.ts";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { createHandler } from "../../lambda/http/create-handler.ts";
import {
  createTokenIssuer,
  generateSigningKey,
  LOCAL_CLIENT_ID,
  type TokenIssuer,
} from "../../local/token-issuer.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { TEST_ISSUER } from "../../support/harness.ts";
import { InMemoryPlantStore } from "../../support/in-memory-plant-store.ts";
import { type JwksServer, startJwksServer } from "../../support/jwks-server.ts";
import { expectErrorAnswer } from "../support/answers.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { captureLogs, type LogCapture } from "../support/log-capture.ts";

const WINDOW_MS = KEY_SET_REFETCH_INTERVAL_SECONDS * 1000;
let keyA: TokenIssuer;
let keyB: TokenIssuer;
let jwks: JwksServer;
let clock: FakeClock;
let logs: LogCapture;
let nextId = 1;

beforeAll(async () => {
  keyA = await createTokenIssuer(TEST_ISSUER, await generateSigningKey());
  keyB = await createTokenIssuer(TEST_ISSUER, await generateSigningKey());
});
beforeEach(async () => {
  clock = new FakeClock({ now: Date.now() });
  jwks = await startJwksServer(keyA.jwks);
  logs = captureLogs();
});
afterEach(async () => {
  logs.restore();
  await jwks.close();
});

/** The production wiring (lambda/dependencies.ts) on the fake clock: the refresh runs after each answer. */
function functionWith(options: IssuerKeysOptions = {}, jwksUrl = jwks.url) {
  const policy = { issuer: TEST_ISSUER, jwksUrl, audiences: [], clientIds: [LOCAL_CLIENT_ID] };
  const keys = createIssuerKeys(policy, { clock, ...options });
  const handler = createHandler({
    authenticate: createAuthenticator(policy, { keys }),
    store: new InMemoryPlantStore(),
    afterAnswer: () => keys.refreshInBackground(),
  });
  /** A token of `issuer` (its kid renamed to `kid`), or one minted before, answered by the function. */
  return async (issuer: TokenIssuer | string, kid?: string): Promise<ApiGatewayResult> => {
    const token = typeof issuer === "string" ? issuer : await issuer.mint();
    const renamed = kid === undefined ? token : renameKid(token, kid);
    return handler(apiGatewayEvent("2.0", { token: renamed, body: `{"id":${nextId++},"name":"Fern"}` }));
  };
}

/** The token with its header's kid replaced: what a caller probing kids sends. */
function renameKid(token: string, kid: string): string {
  const [header = "", ...rest] = token.split(".");
  const decoded = JSON.parse(Buffer.from(header, "base64url").toString()) as object;
  return [Buffer.from(JSON.stringify({ ...decoded, kid })).toString("base64url"), ...rest].join(".");
}

function expectUnavailable(result: ApiGatewayResult, message: RegExp, retryAfterSeconds: number): void {
  expect(expectErrorAnswer(result, 503).message).toMatch(message);
  expect(result.headers["retry-after"]).toBe(String(retryAfterSeconds));
  expect(result.headers["www-authenticate"]).toBeUndefined();
}

const metricsLogged = (metric: string) =>
  logs.stdoutLines().filter((line) => line.includes(`"${metric}":1`)).length;

describe("keys delivered at deploy time (JWKS_JSON)", () => {
  test("a cold start answers 200 with the issuer unreachable; the issuer is asked only after the answer", async () => {
    const answer = functionWith(
      { deliveredKeySet: JSON.stringify(keyA.jwks) },
      "http://127.0.0.1:9/jwks.json",
    );
    expect((await answer(keyA)).statusCode).toBe(200);
    expect(logs.stdoutLines()[0]).toContain('"issuerMs":0');
    await vi.waitFor(() => expect(logs.text()).toContain("refreshing the issuer's key set failed"));
    expect((await answer(keyA)).statusCode).toBe(200);
  });

  test("a JWKS_JSON that is not a key set is logged, and the issuer's is fetched instead", async () => {
    const answer = functionWith({ deliveredKeySet: "<html>" });
    expect(logs.text()).toContain("the key set delivered with the deployment is not usable");
    expect((await answer(keyA)).statusCode).toBe(200);
    expect(jwks.fetches()).toBe(1);
  });

  test("a key the issuer stops publishing stops verifying at the first refresh that shows it gone", async () => {
    const answer = functionWith({
      deliveredKeySet: JSON.stringify({ keys: [...keyA.jwks.keys, ...keyB.jwks.keys] }),
    });
    jwks.setKeys(keyB.jwks);
    expect((await answer(keyA)).statusCode).toBe(200);
    // The refresh after that answer (due at once, to confirm the delivered set) drops key A.
    await vi.waitFor(async () => expect((await answer(keyA)).statusCode).toBe(401));
    expect((await answer(keyB)).statusCode).toBe(200);
    const fetches = jwks.fetches();
    // Key B dropped later: trusted until the refresh interval has passed, then refused.
    jwks.setKeys(keyA.jwks);
    clock.advance(KEY_SET_REFRESH_INTERVAL_SECONDS * 1000 - 1);
    expect((await answer(keyB)).statusCode).toBe(200);
    expect(jwks.fetches()).toBe(fetches);
    clock.advance(1);
    expect((await answer(keyB)).statusCode).toBe(200);
    await vi.waitFor(async () => expect((await answer(keyB)).statusCode).toBe(401));
  });

  test("a request never waits for a refresh: an issuer that hangs changes no answer", async () => {
    jwks.setBehaviour("hang");
    const answer = functionWith({ deliveredKeySet: JSON.stringify(keyA.jwks) });
    for (let i = 0; i < 3; i++) expect((await answer(keyA)).statusCode).toBe(200);
    await vi.waitFor(() => expect(jwks.fetches()).toBe(1));
    expect((await answer(keyA)).statusCode).toBe(200);
  });
});

describe("a token naming a key not held", () => {
  test("401 once a fresh set lacks it, then 503 without a fetch until the window closes, then a fetch again", async () => {
    const answer = functionWith();
    const first = await answer(keyA, "unknown-1");
    expect(expectErrorAnswer(first, 401).message).toBe("the token is invalid: unknown signing key");
    clock.advance(3000);
    expectUnavailable(await answer(keyA, "unknown-2"), /not among the issuer's keys as last fetched/, 7);
    expect((await answer(keyA)).statusCode).toBe(200);
    expect(jwks.fetches()).toBe(1);
    clock.advance(WINDOW_MS);
    expectErrorAnswer(await answer(keyA, "unknown-3"), 401);
    expect(jwks.fetches()).toBe(2);
    expect([metricsLogged("UnknownSigningKey"), metricsLogged("UnknownSigningKeyHeld")]).toEqual([2, 1]);
  });

  test("a key rotated in: 503 inside the window, 200 once a refetch is allowed", async () => {
    const answer = functionWith();
    expectErrorAnswer(await answer(keyA, "unknown"), 401);
    jwks.setKeys({ keys: [...keyA.jwks.keys, ...keyB.jwks.keys] });
    expectErrorAnswer(await answer(keyB), 503);
    clock.advance(WINDOW_MS);
    expect((await answer(keyB)).statusCode).toBe(200);
  });

  test("concurrent random kids share one fetch", async () => {
    const answer = functionWith();
    // Minted first, so that all 20 reach the key lookup before the fetch ends: one minted later would
    // arrive inside the window the fetch opened, and rightly get its 503.
    const tokens = await Promise.all(Array.from({ length: 20 }, () => keyA.mint()));
    const results = await Promise.all(tokens.map((token, i) => answer(token, `random-${i}`)));
    expect(results.map((result) => result.statusCode)).toEqual(Array(20).fill(401));
    expect(jwks.fetches()).toBe(1);
  });
});

describe("the issuer's faults: 503 with Retry-After, never 401", () => {
  test("a 500: 503, and for the window no fetch; the keys held keep serving", async () => {
    const answer = functionWith();
    expect((await answer(keyA)).statusCode).toBe(200);
    jwks.setBehaviour("fail");
    const failed = await answer(keyA, "rotated");
    expectUnavailable(failed, /signing keys could not be fetched/, KEY_SET_REFETCH_INTERVAL_SECONDS);
    expect(failed.body).not.toContain("127.0.0.1");
    // A 500 is an answer: not asked again at once.
    expect(jwks.fetches()).toBe(2);
    clock.advance(4000);
    expectUnavailable(await answer(keyA, "rotated"), /could not be fetched/, 6);
    expect((await answer(keyA)).statusCode).toBe(200);
    expect(jwks.fetches()).toBe(2);
    expect(metricsLogged("IssuerUnavailable")).toBe(2);
  });

  test("an issuer that never answers: each attempt times out, one retry, then 503", async () => {
    jwks.setBehaviour("hang");
    const answer = functionWith();
    expectUnavailable(await answer(keyA), /could not be fetched/, KEY_SET_REFETCH_INTERVAL_SECONDS);
    expect(jwks.fetches()).toBe(2);
  });

  test("a failed refresh holds back the fetch a kid not held would make", async () => {
    const answer = functionWith({ deliveredKeySet: JSON.stringify(keyA.jwks) });
    jwks.setBehaviour("fail");
    expect((await answer(keyA)).statusCode).toBe(200);
    await vi.waitFor(() => expect(logs.text()).toContain("refreshing the issuer's key set failed"));
    expectUnavailable(await answer(keyB), /could not be fetched/, KEY_SET_REFETCH_INTERVAL_SECONDS);
    expect(jwks.fetches()).toBe(1);
  });
});

describe("prefetching the key set at init, without delivered keys", () => {
  test("the set is fetched before the first request, which then fetches nothing", async () => {
    const answer = functionWith({ prefetchKeys: true });
    await vi.waitFor(() => expect(jwks.fetches()).toBe(1));
    expect((await answer(keyA)).statusCode).toBe(200);
    expect(jwks.fetches()).toBe(1);
  });

  test("a failed prefetch logs one line and the first request fetches again", async () => {
    jwks.setBehaviour("fail");
    const answer = functionWith({ prefetchKeys: true });
    await vi.waitFor(() => expect(logs.text()).toContain("prefetching the issuer's key set failed"));
    jwks.setBehaviour("serve");
    expect((await answer(keyA)).statusCode).toBe(200);
  });
});
