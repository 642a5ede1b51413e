/** Tokens of the client-credentials grant: asked for as Cognito expects, cached, shared, replaced once. */
import { describe, expect, it } from "vitest";
import { createPlantStoreClient, PlantStoreError, TokenEndpointError } from "../../client/index.ts";
import { FakeClock } from "../support/fake-clock.ts";
import {
  BASE_URL,
  CREDENTIALS,
  clientOnFakes,
  INVALID_TOKEN_CHALLENGE,
  json,
  neverAnswers,
  numberedTokens,
  type Responder,
  START,
  scriptedFetch,
  settle,
  TOKEN_URL,
  tokenAnswer,
} from "./fakes.ts";

const ok: Responder = () => json(200, { name: "Fern" });

/** A token endpoint that gives token-1, token-2, … (or answers with `answerToken`), and an API answering `answerPlants`. */
function setup(
  answerPlants: Responder = ok,
  answerToken?: Responder,
  credentials: Parameters<typeof createPlantStoreClient>[0]["credentials"] = CREDENTIALS,
) {
  // No random of its own: the client's Math.random.
  const fakes = clientOnFakes({
    answerPlants,
    answerToken: answerToken ?? numberedTokens(),
    options: { credentials },
  });
  const create = (id: number | bigint = 1) =>
    settle(fakes.clock, fakes.client.createPlant({ id, name: "Fern" }));
  return { ...fakes, create };
}

const bearerOf = (request: { headers: Headers } | undefined) => request?.headers.get("authorization");

describe("the token request", () => {
  it("is Cognito's client-credentials grant: POST, form body, HTTP Basic, scope when given", async () => {
    const { create, tokenRequests } = setup(ok, undefined, { ...CREDENTIALS, scope: "plants/write" });
    await create();
    const [request] = tokenRequests();
    expect(request?.method).toBe("POST");
    expect(request?.headers.get("content-type")).toBe("application/x-www-form-urlencoded");
    expect(request?.headers.get("authorization")).toBe(
      `Basic ${Buffer.from(`${CREDENTIALS.clientId}:${CREDENTIALS.clientSecret}`).toString("base64")}`,
    );
    expect(Object.fromEntries(new URLSearchParams(request?.body))).toEqual({
      grant_type: "client_credentials",
      scope: "plants/write",
    });
  });

  it("form-encodes an id or secret with reserved characters before Basic (RFC 6749 §2.3.1)", async () => {
    const { create, tokenRequests } = setup(ok, undefined, {
      ...CREDENTIALS,
      clientId: "a:b",
      clientSecret: "p&ss word",
    });
    await create();
    const basic = bearerOf(tokenRequests()[0])?.replace("Basic ", "") ?? "";
    expect(atob(basic)).toBe("a%3Ab:p%26ss+word");
  });
});

describe("the token cache", () => {
  it("serves 50 concurrent creates with one token request", async () => {
    const { clock, client, tokenRequests, plantRequests } = setup();
    await settle(
      clock,
      Promise.all(Array.from({ length: 50 }, (_, id) => client.createPlant({ id, name: "Fern" }))),
    );
    expect(tokenRequests()).toHaveLength(1);
    expect(plantRequests()).toHaveLength(50);
    expect(new Set(plantRequests().map(bearerOf))).toEqual(new Set(["Bearer token-1"]));
  });

  it("uses a token until shortly before expires_in, then fetches one new token for the next calls", async () => {
    const { clock, create, tokenRequests, plantRequests } = setup();
    await create();
    clock.advance(3540_000 - 1);
    await create();
    expect(tokenRequests()).toHaveLength(1);
    clock.advance(1);
    await create();
    await create();
    expect(tokenRequests()).toHaveLength(2);
    expect(plantRequests().map(bearerOf)).toEqual([
      "Bearer token-1",
      "Bearer token-1",
      "Bearer token-2",
      "Bearer token-2",
    ]);
  });

  it("fetches one new token on a 401 invalid_token, and tries once more with it", async () => {
    const { create, tokenRequests, plantRequests } = setup((request) =>
      bearerOf(request) === "Bearer token-1"
        ? json(401, { error: 401, message: "the token has expired" }, INVALID_TOKEN_CHALLENGE)
        : ok(request, undefined),
    );
    expect(await create()).toEqual({ name: "Fern" });
    expect(tokenRequests()).toHaveLength(2);
    expect(plantRequests().map(bearerOf)).toEqual(["Bearer token-1", "Bearer token-2"]);
  });

  it("replaces a refused token once for many concurrent calls that were refused with it", async () => {
    const { clock, client, tokenRequests } = setup((request) =>
      bearerOf(request) === "Bearer token-1"
        ? json(401, { error: 401, message: "revoked" }, INVALID_TOKEN_CHALLENGE)
        : ok(request, undefined),
    );
    await settle(
      clock,
      Promise.all(Array.from({ length: 20 }, (_, id) => client.createPlant({ id, name: "Fern" }))),
    );
    expect(tokenRequests()).toHaveLength(2);
  });

  it("throws the second 401 instead of looping when the new token is refused too", async () => {
    const { create, tokenRequests, plantRequests } = setup(() =>
      json(401, { error: 401, message: "signature does not match" }, INVALID_TOKEN_CHALLENGE),
    );
    await expect(create()).rejects.toMatchObject({
      status: 401,
      message: expect.stringContaining("signature"),
    });
    expect(tokenRequests()).toHaveLength(2);
    expect(plantRequests()).toHaveLength(2);
  });

  it("does not refresh on a 401 that is not invalid_token, nor on a 403", async () => {
    for (const [status, headers] of [
      [401, { "www-authenticate": 'Bearer realm="plants"' }],
      [403, { "www-authenticate": 'Bearer realm="plants", error="insufficient_scope"' }],
    ] as const) {
      const { create, tokenRequests, plantRequests } = setup(() =>
        json(status, { error: status, message: "no" }, headers),
      );
      await expect(create()).rejects.toMatchObject({ status });
      expect([tokenRequests().length, plantRequests().length]).toEqual([1, 1]);
    }
  });

  it("stops a call waiting on the token function when the client's signal aborts; once aborted, asks nothing", async () => {
    const clock = new FakeClock({ now: START });
    const controller = new AbortController();
    let asked = 0;
    const fake = scriptedFetch(clock, ok);
    const client = createPlantStoreClient({
      baseUrl: BASE_URL,
      credentials: {
        token: () => {
          asked++;
          queueMicrotask(() => controller.abort(new Error("shutting down")));
          return new Promise<string>(() => undefined); // a token function that never answers
        },
      },
      fetch: fake.fetch,
      clock,
      signal: controller.signal,
    });
    // The abort's reason, not the deadline's timeout the clock would reach.
    await expect(settle(clock, client.createPlant({ id: 1, name: "Fern" }))).rejects.toThrow("shutting down");
    await expect(settle(clock, client.createPlant({ id: 2, name: "Fern" }))).rejects.toThrow("shutting down");
    expect(asked).toBe(1);
    expect(fake.requests).toHaveLength(0);
  });

  it("asks a token function again on a 401 invalid_token, but cannot replace a fixed token", async () => {
    const refused = () => json(401, { error: 401, message: "expired" }, INVALID_TOKEN_CHALLENGE);
    const clock = new FakeClock({ now: START });
    let asked = 0;
    const withFunction = scriptedFetch(clock, (request) =>
      bearerOf(request) === "Bearer mine-1" ? refused() : ok(request, undefined),
    );
    const client = createPlantStoreClient({
      baseUrl: BASE_URL,
      credentials: { token: async () => `mine-${++asked}` },
      fetch: withFunction.fetch,
      clock,
    });
    expect(await settle(clock, client.createPlant({ id: 1, name: "Fern" }))).toEqual({ name: "Fern" });
    expect(asked).toBe(2);

    const fixed = scriptedFetch(clock, refused);
    const fixedClient = createPlantStoreClient({
      baseUrl: BASE_URL,
      credentials: { token: "mine-1" },
      fetch: fixed.fetch,
      clock,
    });
    const error = (await settle(clock, fixedClient.createPlant({ id: 1, name: "Fern" })).catch(
      (thrown: unknown) => thrown,
    )) as Error;
    expect(error).toMatchObject({ status: 401 });
    expect(error.message).not.toContain("mine-1");
    expect(fixed.requests).toHaveLength(1);
  });
});

/** How long a token is used when its lifetime is unknown: Cognito's shortest, 5 minutes, less a tenth. */
const UNKNOWN_LIFETIME_USED_MS = 300_000 - 30_000;
/** How long a token is used at most, whatever it says: Cognito's longest, a day, less a minute. */
const LONGEST_USE_MS = 86_400_000 - 60_000;

/**
 * Creates at the start, just before `usedMs` has passed and at `usedMs`: the token requests made by
 * then, which are [1, 1, 2] when a token is used for exactly `usedMs`.
 */
async function tokenRequestsOver(usedMs: number, setupResult: ReturnType<typeof setup>): Promise<number[]> {
  const { clock, create, tokenRequests } = setupResult;
  const counts: number[] = [];
  await create();
  counts.push(tokenRequests().length);
  clock.advance(usedMs - 1);
  await create();
  counts.push(tokenRequests().length);
  clock.advance(1);
  await create();
  counts.push(tokenRequests().length);
  return counts;
}

describe("an expires_in read as a careful OAuth client reads it", () => {
  const answering = (expiresIn: unknown) => () =>
    json(200, {
      access_token: "t",
      token_type: "Bearer",
      ...(expiresIn === undefined ? {} : { expires_in: expiresIn }),
    });

  it.each([
    ["3600", 3600, 3_540_000],
    ['"3600" (a string of digits, as some servers send)', "3600", 3_540_000],
    ["3599.7 (whole seconds)", 3599.7, 3_539_000],
    ["1 (a tenth kept in hand)", 1, 900],
  ])("uses a token given %s until shortly before it expires", async (_case, expiresIn, usedMs) => {
    expect(await tokenRequestsOver(usedMs, setup(ok, answering(expiresIn)))).toEqual([1, 1, 2]);
  });

  it.each([
    ["absent", undefined],
    ["null", null],
    ["0", 0],
    ["-60", -60],
    ["0.5 (under a second)", 0.5],
    ['"soon" (not a number)', "soon"],
    ['"-5" (not digits)', "-5"],
    ["an object", { seconds: 60 }],
  ])(
    "takes an expires_in %s for an unknown lifetime: the token is used 5 minutes, not fetched per call",
    async (_case, expiresIn) => {
      expect(await tokenRequestsOver(UNKNOWN_LIFETIME_USED_MS, setup(ok, answering(expiresIn)))).toEqual([
        1, 1, 2,
      ]);
    },
  );

  it.each([
    ["10 years", 10 * 365 * 86_400],
    ["1e300", 1e300],
  ])("keeps a token whose expires_in is %s a day at most", async (_case, expiresIn) => {
    expect(await tokenRequestsOver(LONGEST_USE_MS, setup(ok, answering(expiresIn)))).toEqual([1, 1, 2]);
  });
});

describe("a token function's token is kept until it expires or is refused", () => {
  function withTokenFunction(give: (asked: number) => unknown) {
    let asked = 0;
    const result = setup(ok, undefined, {
      token: async () => give(++asked) as string,
    });
    return { ...result, asked: () => asked };
  }

  it("asks once for 4 creates when it gives a string, and again after 5 minutes (its lifetime is unknown)", async () => {
    const { clock, create, asked, plantRequests } = withTokenFunction((n) => `mine-${n}`);
    for (let id = 1; id <= 4; id++) await create(id);
    expect(asked()).toBe(1);
    expect(plantRequests().map(bearerOf)).toEqual(Array(4).fill("Bearer mine-1"));
    clock.advance(UNKNOWN_LIFETIME_USED_MS);
    await create(5);
    expect(asked()).toBe(2);
  });

  it.each([
    ["a Date", (at: number) => new Date(at)],
    ["milliseconds since the epoch", (at: number) => at],
  ])("keeps { token, expiresAt } given as %s until shortly before expiresAt", async (_case, expiresAt) => {
    const result = withTokenFunction((n) => ({
      token: `mine-${n}`,
      expiresAt: expiresAt(START + 3_600_000),
    }));
    expect(
      await tokenRequestsOver(3_540_000, { ...result, tokenRequests: () => Array(result.asked()) }),
    ).toEqual([1, 1, 2]);
  });

  it("asks again for every call when the token it gave has already expired, as it said", async () => {
    const { create, asked } = withTokenFunction((n) => ({ token: `mine-${n}`, expiresAt: START - 1 }));
    await create(1);
    await create(2);
    expect(asked()).toBe(2);
  });

  it.each([
    [
      "an expiresAt in seconds (a JWT's exp)",
      { token: "mine", expiresAt: 1_800_003_600 },
      /looks like seconds/,
    ],
    [
      "an expiresAt that is no time",
      { token: "mine", expiresAt: "in an hour" },
      /must be a Date or milliseconds/,
    ],
    ["no token", { expiresAt: START + 60_000 }, /gave no token/],
    ["an empty string", "", /gave no token/],
  ])("refuses %s with a TypeError, sending nothing", async (_case, given, message) => {
    const { create, plantRequests } = withTokenFunction(() => given);
    await expect(create()).rejects.toThrow(message);
    expect(plantRequests()).toHaveLength(0);
  });
});

describe("an error of the caller's token function", () => {
  /** An error of the caller's own, which may hold anything, a credential included. */
  class SignInExpired extends Error {
    constructor(readonly refreshToken: string) {
      super("the sign-in has expired");
    }
  }

  it.each([
    [
      "throws",
      (error: Error) => () => {
        throw error;
      },
    ],
    ["rejects with", (error: Error) => () => Promise.reject(error)],
  ])(
    "that it %s is thrown as it is: the caller's own, not wrapped in a PlantStoreError; nothing is sent",
    async (_case, failing) => {
      const expired = new SignInExpired("refresh-token-1");
      const { create, requests } = setup(ok, undefined, { token: failing(expired) });
      const error = await create().catch((thrown: unknown) => thrown);
      expect(error).toBe(expired);
      expect(error).not.toBeInstanceOf(PlantStoreError);
      expect(requests).toHaveLength(0);
    },
  );

  it("when asked anew after the API refused its token, following a POST that timed out, is thrown as it is too", async () => {
    const expired = new SignInExpired("refresh-token-2");
    let asked = 0;
    let posted = 0;
    const { create, plantRequests } = setup(
      (_request, signal) =>
        ++posted === 1
          ? neverAnswers(signal)
          : json(401, { error: 401, message: "revoked" }, INVALID_TOKEN_CHALLENGE),
      undefined,
      {
        token: () => {
          if (++asked === 1) return "mine-1";
          throw expired;
        },
      },
    );
    expect(await create().catch((thrown: unknown) => thrown)).toBe(expired);
    expect(plantRequests()).toHaveLength(2);
  });
});

describe("the token endpoint's failures", () => {
  it.each([
    [401, "invalid_client"],
    [400, "invalid_scope"],
    [400, "unsupported_grant_type"],
  ])(
    "a %i %s is a TokenEndpointError naming the endpoint and the error, without the secret, not retried",
    async (status, oauthError) => {
      const { create, tokenRequests, plantRequests } = setup(ok, () => json(status, { error: oauthError }));
      const error = (await create().catch((thrown: unknown) => thrown)) as TokenEndpointError;
      expect(error).toBeInstanceOf(TokenEndpointError);
      expect(error).toMatchObject({ name: "TokenEndpointError", status, oauthError, tokenUrl: TOKEN_URL });
      expect(error.message).toBe(`token endpoint ${TOKEN_URL} answered ${status} ${oauthError}`);
      expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain(
        CREDENTIALS.clientSecret,
      );
      expect(tokenRequests()).toHaveLength(1);
      expect(plantRequests()).toHaveLength(0);
    },
  );

  it("masks the secret when the endpoint repeats it in its error_description", async () => {
    const { create } = setup(ok, () =>
      json(401, {
        error: "invalid_client",
        error_description: `client secret ${CREDENTIALS.clientSecret} does not match`,
      }),
    );
    const error = (await create().catch((thrown: unknown) => thrown)) as TokenEndpointError;
    expect(error.message).toBe(
      `token endpoint ${TOKEN_URL} answered 401 invalid_client: client secret [redacted] does not match`,
    );
  });

  it("retries a token endpoint that is down (no answer, 503), then creates the plant", async () => {
    let asked = 0;
    const { create, tokenRequests } = setup(ok, () => {
      asked++;
      if (asked === 1) throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
      if (asked === 2) return json(503, { message: "Service Unavailable" });
      return tokenAnswer("token-3");
    });
    expect(await create()).toEqual({ name: "Fern" });
    expect(tokenRequests()).toHaveLength(3);
  });

  it("throws a TokenEndpointError naming the endpoint when it stays down", async () => {
    const { create, plantRequests } = setup(ok, () => {
      throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
    });
    const error = (await create().catch((thrown: unknown) => thrown)) as TokenEndpointError;
    expect(error).toBeInstanceOf(TokenEndpointError);
    expect(error.message).toBe(`token endpoint ${TOKEN_URL}: no answer (fetch failed: ECONNREFUSED)`);
    expect(error.attempts).toBe(3);
    expect(plantRequests()).toHaveLength(0);
  });

  it("refuses a 200 without an access token, and credentials without a secret, before any call", async () => {
    const { create } = setup(ok, () => json(200, { token_type: "Bearer" }));
    await expect(create()).rejects.toThrow(
      `token endpoint ${TOKEN_URL} answered 200 without an access token`,
    );
    expect(() =>
      createPlantStoreClient({ baseUrl: BASE_URL, credentials: { ...CREDENTIALS, clientSecret: "" } }),
    ).toThrow("credentials.clientSecret must be a non-empty string");
  });
});
