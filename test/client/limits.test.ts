/**
 * The limits the README states, kept: at most maxAttempts POSTs per createPlant (the one sent again
 * with a new token among them), every token request within the same deadline, messages that say what
 * happened, answers read up to MAX_ANSWER_BYTES and no further; and a NewPlant with a property the
 * contract lacks refused before anything is sent, by the compiler and at run time (its example is a name
 * no field can have, and the fields it names are the generated ones: a field added to the contract
 * leaves this file as it is).
 */
import { describe, expect, it } from "vitest";
import { NEW_PLANT_FIELDS } from "../../client/generated/plant-schema.ts";
import {
  MAX_ANSWER_BYTES,
  type PlantStoreClientOptions,
  PlantStoreError,
  TokenEndpointError,
} from "../../client/index.ts";
import { FakeClock } from "../support/fake-clock.ts";
import {
  answerAfter,
  BASE_URL,
  clientOnFakes,
  INVALID_TOKEN_CHALLENGE,
  inTurn,
  json,
  neverAnswers,
  numberedTokens,
  type Responder,
  START,
  settle,
  TOKEN_URL,
  tokenAnswer,
} from "./fakes.ts";

function setup(
  answerPlants: Responder,
  answerToken: Responder = numberedTokens(),
  options: Partial<PlantStoreClientOptions> = {},
  clock?: FakeClock,
) {
  const fakes = clientOnFakes({
    answerPlants,
    answerToken,
    options: { random: () => 0.5, ...options },
    clock,
  });
  const create = () => settle(fakes.clock, fakes.client.createPlant({ id: 1n, name: "Fern" }));
  return { ...fakes, create };
}

const unavailable = () =>
  json(503, { error: 503, message: "the store is unavailable" }, { "retry-after": "1" });
const invalidToken = () =>
  json(401, { error: 401, message: "the token has expired" }, INVALID_TOKEN_CHALLENGE);

describe("at most maxAttempts POSTs per createPlant, a new token's POST among them", () => {
  it.each([3, 4, 6])(
    "503, 503, 401 invalid_token, 503…: as many POSTs as maxAttempts, %i",
    async (maxAttempts) => {
      const { create, plantRequests, tokenRequests } = setup(
        inTurn(unavailable, unavailable, invalidToken, unavailable),
        undefined,
        { retry: { maxAttempts, deadlineMs: 60_000, maxRetryAfterMs: 1000 } },
      );
      const error = (await create().catch((thrown: unknown) => thrown)) as PlantStoreError;
      expect(error).toBeInstanceOf(PlantStoreError);
      expect(plantRequests()).toHaveLength(maxAttempts);
      expect(error.attempts).toBe(maxAttempts);
      expect(error.status).toBe(maxAttempts === 3 ? 401 : 503);
      // With 3, the refused token is the last attempt's: no new token is fetched for a POST never sent.
      expect(tokenRequests()).toHaveLength(maxAttempts === 3 ? 1 : 2);
    },
  );

  it("sends the POST with the new token at once after a refused token", async () => {
    const { create, plantRequests } = setup(inTurn(invalidToken, () => json(200, { name: "Fern" })));
    expect(await create()).toEqual({ name: "Fern" });
    expect(plantRequests().map((request) => request.at - START)).toEqual([0, 0]);
  });
});

describe("every token request within the call's deadline, with a message that says what happened", () => {
  it("a slow token endpoint and a refused token: over within deadlineMs, one POST, no 'within 0 ms'", async () => {
    const clock = new FakeClock({ now: START });
    const { create, plantRequests, tokenRequests } = setup(
      invalidToken,
      (request, signal) =>
        answerAfter(clock, tokenRequests().length === 1 ? 4000 : 7000, () => tokenAnswer("t"))(
          request,
          signal,
        ),
      { retry: { deadlineMs: 10_000, attemptTimeoutMs: 5000 } },
      clock,
    );
    const error = (await create().catch((thrown: unknown) => thrown)) as Error;
    expect(clock.now() - START).toBeLessThanOrEqual(10_000);
    expect(error).toBeInstanceOf(TokenEndpointError);
    // The second token's first request waited its 5 s; the retry 50 ms later had what was left: 950 ms.
    expect(error.message).toBe(`token endpoint ${TOKEN_URL}: no answer within 950 ms`);
    expect(plantRequests()).toHaveLength(1);
    expect(tokenRequests()).toHaveLength(3);
  });

  it("a token fetch that leaves too little time: the token request is cut at the deadline, named with the time it had", async () => {
    const clock = new FakeClock({ now: START });
    const { create } = setup(
      invalidToken,
      answerAfter(clock, 6000, () => tokenAnswer("t")),
      { retry: { deadlineMs: 10_000, attemptTimeoutMs: 8000 } },
      clock,
    );
    const error = (await create().catch((thrown: unknown) => thrown)) as Error;
    expect(clock.now() - START).toBe(10_000);
    expect(error.message).toBe(`token endpoint ${TOKEN_URL}: no answer within 4000 ms`);
    expect(error.message).not.toMatch(/within 0 ms/);
  });

  it("a caller that joins a token fetch in flight hears how it ended, before its own deadline", async () => {
    const clock = new FakeClock({ now: START });
    const { client } = setup(
      () => json(200, { name: "Fern" }),
      (_request, signal) => neverAnswers(signal),
      { retry: { deadlineMs: 10_000, attemptTimeoutMs: 10_000 } },
      clock,
    );
    const first = client.createPlant({ id: 1n, name: "Fern" }).catch((thrown: unknown) => thrown);
    clock.advance(7000);
    const second = settle(
      clock,
      client.createPlant({ id: 2n, name: "Fern" }).catch((thrown: unknown) => thrown),
    );
    const joined = (await second) as Error;
    expect(joined).toBeInstanceOf(TokenEndpointError);
    expect(joined.message).toBe(`token endpoint ${TOKEN_URL}: no answer within 10000 ms`);
    expect(clock.now() - START).toBe(10_000);
    expect(await first).toBe(joined);
  });

  it("a POST that gets no answer before the deadline says how long it waited", async () => {
    const clock = new FakeClock({ now: START });
    const { create, plantRequests } = setup(
      (_request, signal) => neverAnswers(signal),
      undefined,
      { retry: { deadlineMs: 7000, attemptTimeoutMs: 5000 } },
      clock,
    );
    const error = (await create().catch((thrown: unknown) => thrown)) as Error;
    expect(error.message).toMatch(/: no answer within (5000|\d{3,4}) ms; the plant may have been stored: /);
    expect(error.message).not.toMatch(/within 0 ms/);
    expect(clock.now() - START).toBeLessThanOrEqual(7000);
    expect(plantRequests().length).toBeGreaterThanOrEqual(1);
  });
});

/** A body of `totalBytes`, made only as it is read; `pulled` says how much was. */
function hugeBody(totalBytes: number) {
  const chunk = new TextEncoder().encode(`{"name":"${"x".repeat(1024 * 1024 - 10)}`);
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled >= totalBytes) return controller.close();
      state.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

describe(`answers are read up to ${MAX_ANSWER_BYTES / 1024} KiB`, () => {
  it.each([200, 503])(
    "a %i of 300 MB is refused after its first MiB, its stream cancelled",
    async (status) => {
      const { stream, state } = hugeBody(300 * 1024 * 1024);
      const { create, plantRequests } = setup(() => new Response(stream, { status }));
      const error = (await create().catch((thrown: unknown) => thrown)) as PlantStoreError;
      expect(error).toBeInstanceOf(PlantStoreError);
      expect(error.message).toBe(
        `POST ${BASE_URL}/plants answered ${status} with a body over 64 KiB, which was not read`,
      );
      expect(error.status).toBe(status);
      expect(state.cancelled).toBe(true);
      expect(state.pulled).toBeLessThanOrEqual(2 * 1024 * 1024);
      expect(plantRequests()).toHaveLength(1);
    },
  );

  it("a body declared longer than the cap is not read at all, nor is an oversize token answer", async () => {
    const { stream, state } = hugeBody(300 * 1024 * 1024);
    const { create } = setup(
      () => json(200, { name: "Fern" }),
      () => new Response(stream, { status: 200, headers: { "content-length": String(300 * 1024 * 1024) } }),
    );
    const error = (await create().catch((thrown: unknown) => thrown)) as Error;
    expect(error).toBeInstanceOf(TokenEndpointError);
    expect(error.message).toBe(
      `token endpoint ${TOKEN_URL} answered 200 with a body over 64 KiB, which was not read`,
    );
    expect(state.pulled).toBeLessThanOrEqual(1024 * 1024);
  });

  it("an answer of exactly the cap is read", async () => {
    const name = "x".repeat(MAX_ANSWER_BYTES - '{"name":""}'.length);
    const { create } = setup(() => json(200, { name }));
    expect(await create()).toEqual({ name });
  });
});

describe("a property the contract does not have", () => {
  // Not a plausible field: the generator refuses a property name that is not an identifier, so this
  // holds whatever fields the contract gains. The fields named are the generated ones.
  const NOT_A_FIELD = "not a field";
  const allowed = ["id", ...NEW_PLANT_FIELDS.map(({ name }) => name)].join(", ");

  it("is refused with a TypeError naming it, before any token or request", async () => {
    const { client, requests } = setup(() => json(200, { name: "Fern" }));
    const typo = { id: 5n, name: "Fern", [NOT_A_FIELD]: "x" };
    // @ts-expect-error a NewPlant has no such property: even a variable (not only a literal) of that type is refused
    const refusal = await client.createPlant(typo).catch((thrown: unknown) => thrown);
    expect(refusal).toBeInstanceOf(TypeError);
    expect((refusal as Error).message).toBe(
      `unknown property '${NOT_A_FIELD}': a NewPlant has only ${allowed}`,
    );
    expect(requests).toHaveLength(0);
    // @ts-expect-error and a literal object
    await expect(client.createPlant({ id: 5n, name: "Fern", "not a field": "red" })).rejects.toThrow(
      `unknown property '${NOT_A_FIELD}'`,
    );
  });
});

describe("a token function of the caller's", () => {
  it("is waited for no longer than the call's deadline, with a message saying so", async () => {
    const clock = new FakeClock({ now: START });
    const { create, plantRequests } = setup(
      () => json(200, { name: "Fern" }),
      undefined,
      { credentials: { token: () => new Promise<string>(() => {}) }, retry: { deadlineMs: 4000 } },
      clock,
    );
    const error = (await create().catch((thrown: unknown) => thrown)) as PlantStoreError;
    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error.message).toBe(
      "the token function gave no token within 4000 ms, what was left of the call's deadline",
    );
    expect(clock.now() - START).toBe(4000);
    expect(plantRequests()).toHaveLength(0);
  });
});
