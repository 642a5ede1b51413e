/** Tokens of the client-credentials grant: asked for as Cognito expects, cached, shared, replaced once. */
import { describe, expect, it } from "vitest";
import { type createPlantStoreClient, PlantStoreError, TokenEndpointError } from "../../client/index.ts";
import {
  CREDENTIALS,
  clientOnFakes,
  INVALID_TOKEN_CHALLENGE,
  json,
  numberedTokens,
  type Responder,
  START,
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
    expect(request?.headers.get("content-type")).toMatch(/^application\/x-www-form-urlencoded\b/);
    // RFC 6749 §2.3.1: each of the id and the secret form-encoded, then joined and base64-encoded.
    const basic = /^Basic (.+)$/.exec(request?.headers.get("authorization") ?? "")?.[1] ?? "";
    const pair = Buffer.from(basic, "base64").toString().split(":").map(decodeURIComponent);
    expect(pair).toEqual([CREDENTIALS.clientId, CREDENTIALS.clientSecret]);
    expect(Object.fromEntries(new URLSearchParams(request?.body))).toEqual({
      grant_type: "client_credentials",
      scope: "plants/write",
    });
  });
});

describe("the token cache", () => {
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
});

/** How long a token is used when its lifetime is unknown: Cognito's shortest, 5 minutes, less a tenth. */
const UNKNOWN_LIFETIME_USED_MS = 300_000 - 30_000;
/** How long a token is used at most, whatever it says: Cognito's longest, a day, less a minute. */
const _LONGEST_USE_MS = 86_400_000 - 60_000;

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

describe("an expires_in as oauth4webapi reads it", () => {
  const answering = (expiresIn: unknown) => () =>
    json(200, {
      access_token: "t",
      token_type: "Bearer",
      ...(expiresIn === undefined ? {} : { expires_in: expiresIn }),
    });

  it.each([
    ["3600", 3600, 3_540_000],
    ['"3600" (a string of digits, as some servers send)', "3600", 3_540_000],
  ])("uses a token given %s until shortly before it expires", async (_case, expiresIn, usedMs) => {
    expect(await tokenRequestsOver(usedMs, setup(ok, answering(expiresIn)))).toEqual([1, 1, 2]);
  });

  it.each([
    ["absent", undefined],
    ["0", 0],
  ])(
    "takes an expires_in %s for an unknown lifetime: the token is used 5 minutes, not fetched per call",
    async (_case, expiresIn) => {
      expect(await tokenRequestsOver(UNKNOWN_LIFETIME_USED_MS, setup(ok, answering(expiresIn)))).toEqual([
        1, 1, 2,
      ]);
    },
  );

  it("refuses one that is no number: an unexpected answer of the token endpoint, nothing posted", async () => {
    const { create, plantRequests } = setup(ok, answering("soon"));
    await expect(create()).rejects.toMatchObject({ name: "TokenEndpointError", kind: "unexpected-answer" });
    expect(plantRequests()).toHaveLength(0);
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
});
