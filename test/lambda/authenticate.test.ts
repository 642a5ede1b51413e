/**
 * The issuer's key set as the authenticator fetches it, against a real loopback JWKS endpoint and
 * tokens signed by a real key: the issuer's faults answer 503 with Retry-After, never 401; a token
 * naming an unknown key refetches the key set at most once per window; the init-time prefetch.
 * The fake clock, started at the time the tokens are minted, stands in for waiting: the test moves it
 * past the 10 s refetch window, and to an attempt's timer for its 1 s response timeout.
 */

import type { JWK } from "jose";
import { afterEach, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import {
  type AuthenticatorOptions,
  createAuthenticator,
  type TokenPolicy,
} from "../../lambda/auth/authenticate.ts";
import { KEY_SET_REFETCH_INTERVAL_SECONDS } from "../../lambda/auth/issuer-keys.ts";
import {
  createJwksFetcher,
  JWKS_RESPONSE_TIMEOUT_MS,
  type KeySetFetcher,
} from "../../lambda/auth/key-set-download.ts";
import { DEFAULT_REQUIRED_SCOPE } from "../../lambda/defaults.ts";
import type { ApiGatewayResult } from "../../lambda/http/api-gateway.ts";
import { createHandler, type Handler } from "../../lambda/http/create-handler.ts";
import {
  createTokenIssuer,
  generateSigningKey,
  LOCAL_CLIENT_ID,
  type TokenIssuer,
} from "../../local/token-issuer.ts";
import { apiGatewayEvent } from "../../support/events.ts";
import { TEST_ISSUER } from "../../support/harness.ts";
import { InMemoryPlantStore } from "../../support/in-memory-plant-store.ts";
import { type JwksBehaviour, type JwksServer, startJwksServer } from "../../support/jwks-server.ts";
import { expectBearerChallenge, expectErrorAnswer } from "../support/answers.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { accessTokenClaims, signToken } from "../support/forged-tokens.ts";
import { captureLogs } from "../support/log-capture.ts";

const WINDOW_MS = KEY_SET_REFETCH_INTERVAL_SECONDS * 1000;

let issuer: TokenIssuer;
let attackerKey: JWK;
let jwks: JwksServer | undefined;
let nextId = 1;
let clock: FakeClock;

beforeAll(async () => {
  issuer = await createTokenIssuer(TEST_ISSUER, await generateSigningKey());
  attackerKey = await generateSigningKey();
});

beforeEach(() => {
  clock = new FakeClock({ now: Date.now() });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await jwks?.close();
  jwks = undefined;
});

async function startIssuer(behaviour: JwksBehaviour = "serve"): Promise<JwksServer> {
  jwks = await startJwksServer(issuer.jwks, behaviour);
  return jwks;
}

function policyFor(server: JwksServer): TokenPolicy {
  return {
    issuer: TEST_ISSUER,
    jwksUrl: server.url,
    audiences: [],
    clientIds: [LOCAL_CLIENT_ID],
  };
}

function handlerFor(
  server: JwksServer,
  options: AuthenticatorOptions = {},
): (token: string) => Promise<ApiGatewayResult> {
  const handler: Handler = createHandler({
    authenticate: createAuthenticator(policyFor(server), { clock, ...options }),
    store: new InMemoryPlantStore(),
  });
  return (token) => handler(apiGatewayEvent("2.0", { token, body: `{"id":${nextId++},"name":"Fern"}` }));
}

/** A well-signed token naming a key the issuer never published: an attacker's, or a typo. */
function unknownKeyToken(): Promise<string> {
  return signToken(attackerKey, accessTokenClaims(), { kid: `unknown-${crypto.randomUUID()}` });
}

/** The real fetcher, counting the fetches it is asked for (synchronously, when they start). */
function countingFetcher(): KeySetFetcher & { started: number } {
  const fetcher = createJwksFetcher(JWKS_RESPONSE_TIMEOUT_MS, clock);
  const counting = {
    started: 0,
    fetch: (uri: string) => {
      counting.started++;
      return fetcher.fetch(uri);
    },
  };
  return counting;
}

function expectUnavailable(result: ApiGatewayResult, retryAfterSeconds: number): void {
  expectErrorAnswer(result, 503);
  expect(result.headers["retry-after"]).toBe(String(retryAfterSeconds));
  expect(result.headers["www-authenticate"]).toBeUndefined();
}

describe("an issuer answering 200 with something that is not a key set", () => {
  test.each(["html", "empty-object", "truncated"] as const)(
    "%s: 503 with Retry-After, one fetch per window, and the key set is used once it is back",
    async (fault) => {
      const server = await startIssuer(fault);
      const send = handlerFor(server);
      const good = await issuer.mint();

      const first = await send(good);
      expectUnavailable(first, KEY_SET_REFETCH_INTERVAL_SECONDS);
      expect(expectErrorAnswer(first).message).toBe(
        "the token issuer's key set was fetched but is not a key set this API can take",
      );
      for (let request = 0; request < 5; request++) expectUnavailable(await send(good), 10);
      clock.advance(4_000);
      expectUnavailable(await send(good), 6);
      expect(server.fetches()).toBe(1);

      server.setBehaviour("serve");
      clock.advance(6_000);
      expect((await send(good)).statusCode).toBe(200);
      expect(server.fetches()).toBe(2);
    },
  );

  test("an issuer answering 500 is held off the same way", async () => {
    const server = await startIssuer("fail");
    const send = handlerFor(server);
    const good = await issuer.mint();
    for (let request = 0; request < 5; request++) expect((await send(good)).statusCode).toBe(503);
    expect(server.fetches()).toBe(1);
    clock.advance(WINDOW_MS);
    server.setBehaviour("serve");
    expect((await send(good)).statusCode).toBe(200);
  });

  test("a faulty refetch leaves the cached key set in use", async () => {
    const server = await startIssuer();
    const send = handlerFor(server);
    expect((await send(await issuer.mint())).statusCode).toBe(200);
    server.setBehaviour("html");
    expectUnavailable(await send(await unknownKeyToken()), 10);
    expect((await send(await issuer.mint())).statusCode).toBe(200);
    expect(server.fetches()).toBe(2);
  });
});

describe("a token naming a key not in the cached key set", () => {
  test("is refused with 401 once a fresh key set lacks it, then answered 503 until a refetch is allowed", async () => {
    const server = await startIssuer();
    const send = handlerFor(server);
    expect((await send(await issuer.mint())).statusCode).toBe(200);
    expect(server.fetches()).toBe(1);

    const refused = await send(await unknownKeyToken());
    expectErrorAnswer(refused, 401);
    expectBearerChallenge(refused, "invalid_token");
    expect(server.fetches()).toBe(2);

    // Inside the window nobody can tell a rotated key from a bogus one without a fetch: 503.
    expectUnavailable(await send(await unknownKeyToken()), 10);
    clock.advance(2_500);
    expectUnavailable(await send(await unknownKeyToken()), 8);
    clock.advance(7_400); // 100 ms left: Retry-After never says 0
    expectUnavailable(await send(await unknownKeyToken()), 1);
    expect(server.fetches()).toBe(2);
    // The keys already cached stay usable throughout.
    expect((await send(await issuer.mint())).statusCode).toBe(200);

    clock.advance(100);
    expectErrorAnswer(await send(await unknownKeyToken()), 401);
    expect(server.fetches()).toBe(3);
  });

  test("during a key rotation a token signed by the new key gets 503, then 200 once a refetch is allowed", async () => {
    const server = await startIssuer();
    const send = handlerFor(server);
    expect((await send(await issuer.mint())).statusCode).toBe(200);
    // Someone opens the window with a random kid just before the issuer rotates its key.
    expectErrorAnswer(await send(await unknownKeyToken()), 401);

    const rotated = await createTokenIssuer(TEST_ISSUER, await generateSigningKey());
    server.setKeys({ keys: [...issuer.jwks.keys, ...rotated.jwks.keys] });
    const tokenOfNewKey = await rotated.mint();
    clock.advance(3_000);
    const held = await send(tokenOfNewKey);
    expectUnavailable(held, 7);
    expect(expectErrorAnswer(held).message).toMatch(/not among the issuer's keys as last fetched/);

    clock.advance(7_000);
    expect((await send(tokenOfNewKey)).statusCode).toBe(200);
    expect(server.fetches()).toBe(3);
  });

  test("each 503 of the window logs one line with what happened and no stack trace", async () => {
    const server = await startIssuer();
    const send = handlerFor(server);
    expectErrorAnswer(await send(await unknownKeyToken()), 401);
    server.setBehaviour("fail");
    clock.advance(WINDOW_MS);
    const logs = captureLogs();
    try {
      expectUnavailable(await send(await unknownKeyToken()), 10);
      expectUnavailable(await send(await unknownKeyToken()), 10);
    } finally {
      logs.restore();
    }
    const details = logs.stdoutLines().map((line) => (JSON.parse(line) as { detail?: string }).detail);
    expect(details).toEqual([
      expect.stringMatching(
        /^IssuerUnavailableError: the token issuer's signing keys could not be fetched\ncaused by: /,
      ),
      "IssuerUnavailableError: the token issuer's signing keys could not be fetched",
    ]);
    for (const detail of details) expect(detail).not.toMatch(/\n\s+at /);
  });

  test("concurrent random kids share one fetch, and later ones fetch nothing inside the window", async () => {
    const server = await startIssuer();
    const send = handlerFor(server);
    const tokens = await Promise.all(Array.from({ length: 20 }, unknownKeyToken));
    const results = await Promise.all(tokens.map(send));
    for (const result of results) expectErrorAnswer(result, 401);
    expect(server.fetches()).toBe(1);

    const later = await Promise.all(tokens.map(send));
    for (const result of later) expectUnavailable(result, 10);
    expect(server.fetches()).toBe(1);
    expect((await send(await issuer.mint())).statusCode).toBe(200);
  });
});

describe("what the metrics count", () => {
  /** The metrics of each request's log line, in order. */
  async function metricsOf(requests: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
    const logs = captureLogs();
    try {
      await requests();
    } finally {
      logs.restore();
    }
    return logs.stdoutLines().map((line) => {
      const { UnknownSigningKey, UnknownSigningKeyHeld, IssuerUnavailable, RefusedAuth } = JSON.parse(
        line,
      ) as Record<string, unknown>;
      return { UnknownSigningKey, UnknownSigningKeyHeld, IssuerUnavailable, RefusedAuth };
    });
  }

  test("a kid a fresh key set lacks counts UnknownSigningKey; each 503 of the window it opens, UnknownSigningKeyHeld", async () => {
    const send = handlerFor(await startIssuer());
    const counted = await metricsOf(async () => {
      expectErrorAnswer(await send(await unknownKeyToken()), 401);
      expectUnavailable(await send(await unknownKeyToken()), 10);
    });
    const none = { UnknownSigningKey: undefined, UnknownSigningKeyHeld: undefined };
    const quiet = { IssuerUnavailable: undefined, RefusedAuth: undefined };
    expect(counted).toEqual([
      { ...none, ...quiet, UnknownSigningKey: 1 },
      { ...none, ...quiet, UnknownSigningKeyHeld: 1 },
    ]);
  });

  test("the issuer failing counts IssuerUnavailable, and so does each 503 of the window it opens", async () => {
    const send = handlerFor(await startIssuer("fail"));
    const counted = await metricsOf(async () => {
      expectUnavailable(await send(await issuer.mint()), 10);
      expectUnavailable(await send(await unknownKeyToken()), 10);
    });
    const issuerFault = {
      UnknownSigningKey: undefined,
      UnknownSigningKeyHeld: undefined,
      IssuerUnavailable: 1,
      RefusedAuth: undefined,
    };
    expect(counted).toEqual([issuerFault, issuerFault]);
  });
});

describe("a key-set endpoint that never answers", () => {
  test("each attempt ends when its 1 s timeout fires; after one retry the request answers 503", async () => {
    const server = await startIssuer("hang");
    const send = handlerFor(server, { fetcher: countingFetcher() });
    const answer = send(await issuer.mint());

    for (const attempt of [1, 2]) {
      await vi.waitFor(() => expect(server.fetches()).toBe(attempt));
      expect(clock.pendingTimers()).toEqual([JWKS_RESPONSE_TIMEOUT_MS]);
      clock.next();
    }
    expectUnavailable(await answer, KEY_SET_REFETCH_INTERVAL_SECONDS);
    expect(clock.pendingTimers()).toEqual([]);
    expect(server.fetches()).toBe(2);
  });
});

describe("prefetching the key set at init", () => {
  test("with prefetchKeys the key set is fetched before the first request, which then fetches nothing", async () => {
    const server = await startIssuer();
    const fetcher = countingFetcher();
    const authenticate = createAuthenticator(policyFor(server), { prefetchKeys: true, fetcher });
    expect(fetcher.started).toBe(1);
    await vi.waitFor(() => expect(server.fetches()).toBe(1));
    await expect(
      authenticate(`Bearer ${await issuer.mint()}`, DEFAULT_REQUIRED_SCOPE),
    ).resolves.toMatchObject({
      clientId: LOCAL_CLIENT_ID,
    });
    expect(server.fetches()).toBe(1);
  });

  test("without it nothing is fetched until a request needs a key", async () => {
    const server = await startIssuer();
    const fetcher = countingFetcher();
    const authenticate = createAuthenticator(policyFor(server), { fetcher });
    // A prefetch starts its fetch before createAuthenticator returns (see the test above).
    expect(fetcher.started).toBe(0);
    await authenticate(`Bearer ${await issuer.mint()}`, DEFAULT_REQUIRED_SCOPE);
    expect(fetcher.started).toBe(1);
    expect(server.fetches()).toBe(1);
  });

  test("a failed prefetch logs one line, rejects nothing unhandled, and the first request fetches again", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    const logs = captureLogs();
    try {
      const server = await startIssuer("fail");
      const authenticate = createAuthenticator(policyFor(server), { prefetchKeys: true, clock });
      await vi.waitFor(() => expect(logs.text()).toContain("prefetching the issuer's key set failed"));
      expect(server.fetches()).toBe(1);

      server.setBehaviour("serve");
      await expect(
        authenticate(`Bearer ${await issuer.mint()}`, DEFAULT_REQUIRED_SCOPE),
      ).resolves.toMatchObject({
        clientId: LOCAL_CLIENT_ID,
      });
      expect(server.fetches()).toBe(2);

      // The prefetch failed (its line is logged) a full round trip ago: Node reports an unhandled
      // rejection at the end of the tick it happens in.
      expect(unhandled).toEqual([]);
      expect(logs.text().trim().split("\n")).toHaveLength(1);
    } finally {
      logs.restore();
      process.off("unhandledRejection", onUnhandled);
    }
  });

  test("a failed prefetch and a still failing issuer: the request answers 503", async () => {
    const logs = captureLogs();
    try {
      const server = await startIssuer("fail");
      const authenticate = createAuthenticator(policyFor(server), { prefetchKeys: true, clock });
      await vi.waitFor(() => expect(server.fetches()).toBe(1));
      const failure = await authenticate(`Bearer ${await issuer.mint()}`, DEFAULT_REQUIRED_SCOPE).catch(
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ status: 503 });
      expect(server.fetches()).toBe(2);
    } finally {
      logs.restore();
    }
  });
});
