/** Tokens of the client-credentials grant: asked for as Cognito expects, cached, shared, replaced once. */
import { describe, expect, it } from "vitest";
import {
  type Credentials,
  PlantStoreError,
  TokenEndpointError,
  type TokenFunctionResult,
} from "../../client/index.ts";
import {
  CREDENTIALS,
  clientOnFakes,
  failing,
  inTurn,
  json,
  START,
  storesPlant,
  TOKEN_URL,
  tokenAnswer,
} from "./fakes.ts";

/** The token a request bore. */
const tokenOf = (request: { headers: Headers }) =>
  request.headers.get("authorization")?.replace(/^Bearer /, "");

describe("the token request", () => {
  it("is Cognito's client-credentials grant: POST, form body, HTTP Basic, scope when given", async () => {
    const credentials = { ...CREDENTIALS, scope: "plants/write" };
    const { create, tokenRequests } = clientOnFakes({ options: { credentials } });
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

/** How long a token is used when its lifetime is unknown: Cognito's shortest, 5 minutes, less a tenth. */
const UNKNOWN_LIFETIME_USED_MS = 300_000 - 30_000;
/** How long a token is used at most, whatever it says: Cognito's longest, a day, less a minute. */
const LONGEST_USE_MS = 86_400_000 - 60_000;

/** A token endpoint that gives token-1, token-2, … with this expires_in (none when undefined). */
function expiringIn(expiresIn: unknown) {
  let issued = 0;
  return () =>
    json(200, {
      access_token: `token-${++issued}`,
      token_type: "Bearer",
      ...(expiresIn === undefined ? {} : { expires_in: expiresIn }),
    });
}

/** A token function that gives token-1, token-2, …, each as `give` makes it. */
function tokenFunction(give: (token: string) => TokenFunctionResult) {
  let asked = 0;
  const credentials: Credentials = { token: async () => give(`token-${++asked}`) };
  return { options: { credentials } };
}

describe("the token cache", () => {
  const inAnHour = START + 3_600_000;
  const givesDate = tokenFunction((token) => ({ token, expiresAt: new Date(inAnHour) }));
  const givesMs = tokenFunction((token) => ({ token, expiresAt: inAnHour }));
  it.each([
    ["an expires_in of 3600", { answerToken: expiringIn(3600) }, 3_540_000],
    ['"3600" (digits in a string, as some servers send)', { answerToken: expiringIn("3600") }, 3_540_000],
    // An unknown lifetime: the token is used 5 minutes, not fetched per call.
    ["no expires_in", { answerToken: expiringIn(undefined) }, UNKNOWN_LIFETIME_USED_MS],
    ["an expires_in of 0", { answerToken: expiringIn(0) }, UNKNOWN_LIFETIME_USED_MS],
    ["an expires_in of two days", { answerToken: expiringIn(172_800) }, LONGEST_USE_MS],
    ["a token function's string", tokenFunction((token) => token), UNKNOWN_LIFETIME_USED_MS],
    ["a token function's expiresAt as a Date", givesDate, 3_540_000],
    ["a token function's expiresAt in milliseconds since the epoch", givesMs, 3_540_000],
  ])("uses a token of %s until shortly before it expires, then a new one", async (_case, fakes, usedMs) => {
    const { clock, create, plantRequests } = clientOnFakes(fakes);
    await create();
    clock.advance(usedMs - 1);
    await create();
    clock.advance(1);
    await create();
    await create();
    expect(plantRequests().map(tokenOf)).toEqual(["token-1", "token-1", "token-2", "token-2"]);
  });

  it("refuses an expires_in that is no number: an unexpected answer of the token endpoint, nothing posted", async () => {
    const { failure, plantRequests } = clientOnFakes({ answerToken: expiringIn("soon") });
    expect(await failure()).toMatchObject({ name: "TokenEndpointError", kind: "unexpected-answer" });
    expect(plantRequests()).toHaveLength(0);
  });
});

describe("a token the API refuses (401 invalid_token)", () => {
  const refusal = failing(401, "the token has expired", {
    "www-authenticate":
      'Bearer realm="plants", error="invalid_token", error_description="the token has expired"',
  });

  it("is replaced by one new token, and the POST sent again with it", async () => {
    const { create, tokenRequests, plantRequests } = clientOnFakes({
      answerPlants: (request) =>
        tokenOf(request) === "token-1" ? refusal() : storesPlant(request, undefined),
    });
    expect(await create()).toEqual({ name: "Fern" });
    expect(tokenRequests()).toHaveLength(2);
    expect(plantRequests().map(tokenOf)).toEqual(["token-1", "token-2"]);
  });

  it.each([
    ["is replaced once: a refusal of the new token is thrown", CREDENTIALS, ["token-1", "token-2"]],
    ["is thrown at once when it is a fixed one, which cannot be replaced", { token: "token-1" }, ["token-1"]],
  ])("%s", async (_case, credentials, tokens) => {
    const { failure, plantRequests } = clientOnFakes({ answerPlants: refusal, options: { credentials } });
    expect(await failure()).toMatchObject({ kind: "unauthorized", status: 401, attempts: tokens.length });
    expect(plantRequests().map(tokenOf)).toEqual(tokens);
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
    async (_case, give) => {
      const expired = new SignInExpired("refresh-token-1");
      const { failure, requests } = clientOnFakes({ options: { credentials: { token: give(expired) } } });
      const error = await failure();
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
    "a %i %s is a TokenEndpointError naming the endpoint and the error, not retried",
    async (status, oauthError) => {
      const { failure, tokenRequests, plantRequests } = clientOnFakes({
        answerToken: () => json(status, { error: oauthError }),
      });
      const error = await failure();
      expect(error).toBeInstanceOf(TokenEndpointError);
      expect(error).toMatchObject({ name: "TokenEndpointError", status, oauthError, tokenUrl: TOKEN_URL });
      expect(error.message).toBe(`token endpoint ${TOKEN_URL} answered ${status} ${oauthError}`);
      expect(tokenRequests()).toHaveLength(1);
      expect(plantRequests()).toHaveLength(0);
    },
  );

  it("retries a token endpoint that is down (no answer, 503), then creates the plant", async () => {
    const refused = () => Promise.reject(new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } }));
    const down = () => json(503, { message: "Service Unavailable" });
    const { create, tokenRequests } = clientOnFakes({
      answerToken: inTurn(refused, down, () => tokenAnswer("token-3")),
    });
    expect(await create()).toEqual({ name: "Fern" });
    expect(tokenRequests()).toHaveLength(3);
  });
});
