import { describe, expect, it, onTestFinished, vi } from "vitest";
import { NEW_PLANT_PROPERTIES } from "../../client/generated/openapi.ts";
import { MAX_ANSWER_BYTES, type PlantStoreClientOptions, PlantStoreError } from "../../client/index.ts";
import { FakeClock } from "../support/fake-clock.ts";
import {
  answerAfter,
  BASE_URL,
  CREDENTIALS,
  clientOnFakes,
  failing,
  failureOf,
  inTurn,
  neverAnswers,
  PLANTS_URL,
  START,
  storesPlant,
  tokenAnswer,
} from "./fakes.ts";

describe("ids: exact int64 or refused before anything is sent", () => {
  it.each([
    ["-9223372036854775808 as a bigint", -9223372036854775808n, "-9223372036854775808"],
    ["9007199254740993 as a bigint", 9007199254740993n, "9007199254740993"],
    ["9223372036854775807 as a bigint", 9223372036854775807n, "9223372036854775807"],
    ["9007199254740993 as a string", "9007199254740993", "9007199254740993"],
    ["9223372036854775807 as a string", "9223372036854775807", "9223372036854775807"],
    ["-9223372036854775808 as a string", "-9223372036854775808", "-9223372036854775808"],
    ["a safe-integer number", 9007199254740991, "9007199254740991"],
    ["zero as a number", 0, "0"],
  ])("sends %s as its exact digits", async (_case, id, digits) => {
    const { create, plantRequests } = clientOnFakes();
    expect(await create({ id, name: "Fern", tag: "fern" })).toEqual({ name: "Fern", tag: "fern" });
    expect(plantRequests()[0]?.body).toBe(`{"id":${digits},"name":"Fern","tag":"fern"}`);
  });

  it.each([
    ["2 ** 53 + 2 as a number", 2 ** 53 + 2, "9007199254740994"],
    ["a fraction", 1.5, "1.5"],
    ["NaN", Number.NaN, "NaN"],
    ["2 ** 63 as a bigint", 2n ** 63n, "9223372036854775808n"],
    ["-(2 ** 63) - 1 as a bigint", -(2n ** 63n) - 1n, "-9223372036854775809n"],
    ["a string of digits beyond int64", "9223372036854775808", '"9223372036854775808"'],
    ["a string that is not decimal digits", "1e3", '"1e3"'],
    ["an empty string", "", '""'],
  ])("refuses %s with a TypeError naming it, and sends nothing", async (_case, id, named) => {
    const { client, requests } = clientOnFakes();
    const refusal = await failureOf(client.createPlant({ id, name: "Fern" }));
    expect(refusal).toBeInstanceOf(TypeError);
    expect(refusal.message).toContain(named);
    expect(requests).toHaveLength(0);
  });

  it("writes names with quotes, backslashes and non-ASCII as JSON, and reads the answer's Plant fields only", async () => {
    const { create, plantRequests } = clientOnFakes({
      answerPlants: () => new Response('{"name":"F\\"ern ☘","id":9223372036854775807,"later":"x"}'),
    });
    expect(await create({ id: 1n, name: 'F"ern ☘\\' })).toEqual({ name: 'F"ern ☘' });
    expect(JSON.parse(plantRequests()[0]?.body ?? "")).toEqual({ id: 1, name: 'F"ern ☘\\' });
  });
});

describe("requests", () => {
  it("posts JSON with the bearer token to {base_url}/plants, also when given the stack's ApiUrl (…/plants)", async () => {
    for (const baseUrl of [BASE_URL, `${BASE_URL}/`, PLANTS_URL]) {
      const { create, plantRequests } = clientOnFakes({ options: { baseUrl } });
      await create();
      const [request] = plantRequests();
      expect(request?.method).toBe("POST");
      expect(request?.headers.get("authorization")).toBe("Bearer token-1");
      expect(request?.headers.get("content-type")).toBe("application/json");
    }
  });

  it("refuses a name it does not know, in the options or in retry, naming it and those it takes, and a retry that is no object", () => {
    const made = (options: object) => () => clientOnFakes({ options: options as PlantStoreClientOptions });
    expect(made({ retries: { maxAttempts: 5 } })).toThrow(
      new TypeError(
        "unknown option 'retries': createPlantStoreClient takes only baseUrl, credentials, fetch, retry, signal, clock, random",
      ),
    );
    expect(made({ retry: { maxAttempt: 5 } })).toThrow(
      new TypeError(
        "unknown option 'retry.maxAttempt': retry takes only maxAttempts, deadlineMs, attemptTimeoutMs, baseDelayMs, maxDelayMs, maxRetryAfterMs",
      ),
    );
    expect(made({ retry: 3 })).toThrow(
      new TypeError("retry must be an object such as { maxAttempts: 3 }, got 3"),
    );
    expect(made({ credentials: { ...CREDENTIALS, scope: 5 } })).toThrow(
      new TypeError("credentials.scope must be a string of space-separated scopes"),
    );
  });
});

describe("errors", () => {
  it.each([
    [400, "invalid-request", 1],
    [401, "unauthorized", 1],
    [403, "forbidden", 1],
    [404, "not-found", 1],
    [409, "conflict", 1],
    [413, "invalid-request", 1],
    [429, "throttled", 3],
    [500, "server-error", 1],
    [502, "unavailable", 3],
    [503, "unavailable", 3],
    [504, "unavailable", 3],
    [202, "unexpected-answer", 1],
  ] as const)(
    "throws a %i as a PlantStoreError of kind %s, with the API's words, after %i POST(s)",
    async (status, kind, posts) => {
      // Only 429 and 502–504 are sent again: any other answer would be the same.
      const answerPlants = failing(status, "said so", { "apigw-requestid": "id-1" });
      const { failure, plantRequests } = clientOnFakes({ answerPlants });
      const error = await failure();
      expect(error).toBeInstanceOf(PlantStoreError);
      expect(error).toMatchObject({
        kind,
        status,
        serverMessage: "said so",
        requestId: "id-1",
        attempts: posts,
      });
      expect(error.message).toContain(`POST ${PLANTS_URL} answered ${status}: said so`);
      expect(plantRequests()).toHaveLength(posts);
    },
  );
});

describe("retries: 503, 429, 502, 504, no answer and timeouts, with backoff, inside the deadline", () => {
  const reset = () => Promise.reject(new TypeError("fetch failed", { cause: { code: "ECONNRESET" } }));
  /** A 429 or 502–504 with Retry-After: `seconds`. */
  const busy = (status: number, seconds: string) => failing(status, "busy", { "retry-after": seconds });

  it.each([
    ["two 503s with Retry-After: 1", [0, 1000, 2000], [busy(503, "1"), busy(503, "1")]],
    ["a 429 with Retry-After: 2", [0, 2000], [busy(429, "2")]],
    ["a 502 and a 504 with Retry-After: 1", [0, 1000, 2000], [busy(502, "1"), busy(504, "1")]],
    ["no answer, then a timeout after it was sent", [0, 0, 1000], [reset, neverAnswers]],
  ])("answers the plant after %s, the same request sent at %j ms", async (_case, times, failures) => {
    const { create, plantRequests } = clientOnFakes({
      answerPlants: inTurn(...failures, storesPlant),
      options: { retry: { attemptTimeoutMs: 1000 } },
    });
    expect(await create({ id: 9007199254740993n, name: "Fern" })).toEqual({ name: "Fern" });
    expect(plantRequests().map((request) => request.at - START)).toEqual(times);
    expect(new Set(plantRequests().map((request) => request.body)).size).toBe(1);
  });

  it("stops retrying once its retry quota is spent in an outage, and earns it back with successes", async () => {
    let outage = true;
    const unavailable = failing(503, "store unavailable", { "retry-after": "0" });
    const { create, plantRequests } = clientOnFakes({
      answerPlants: (request, signal) => (outage ? unavailable() : storesPlant(request, signal)),
    });
    const requestsOf = async (id: number) => {
      const before = plantRequests().length;
      await create({ id, name: "Fern" }).catch(() => undefined);
      return plantRequests().length - before;
    };
    const duringOutage: number[] = [];
    for (let id = 1; id <= 27; id++) duringOutage.push(await requestsOf(id));
    // 500 in the quota, 10 per retry after a 503: 25 calls retry twice, then none retries.
    expect(duringOutage).toEqual([...Array(25).fill(3), 1, 1]);

    outage = false;
    for (let id = 100; id < 110; id++) expect(await requestsOf(id)).toBe(1); // each gives 1 back
    outage = true;
    expect(await requestsOf(200)).toBe(2); // 10 earned back: one retry
  });

  it("runs 20 calls at once on one client signal without Node's listener-leak warning", async () => {
    const emitWarning = vi.spyOn(process, "emitWarning");
    onTestFinished(() => emitWarning.mockRestore());
    const { client } = clientOnFakes({
      answerPlants: (request) =>
        new Promise((resolve) => setTimeout(() => resolve(storesPlant(request, undefined)), 5)),
      options: { signal: new AbortController().signal },
    });
    const calls = Array.from({ length: 20 }, (_, index) =>
      client.createPlant({ id: index + 1, name: "Fern" }),
    );
    expect(await Promise.all(calls)).toHaveLength(20);
    expect(emitWarning).not.toHaveBeenCalled();
  });
});

describe("a property the contract does not have", () => {
  // Not a plausible field, so this holds whatever fields the contract gains.
  const NOT_A_FIELD = "not a field";

  it("is refused with a TypeError naming it, before any token or request", async () => {
    const { client, requests } = clientOnFakes();
    const typo = { id: 5n, name: "Fern", [NOT_A_FIELD]: "x" };
    // @ts-expect-error a NewPlant has no such property: even a variable (not only a literal) of that type is refused
    const refusal = await failureOf(client.createPlant(typo));
    expect(refusal).toBeInstanceOf(TypeError);
    expect(refusal.message).toBe(
      `unknown property '${NOT_A_FIELD}': a NewPlant has only ${Object.keys(NEW_PLANT_PROPERTIES).join(", ")}`,
    );
    expect(requests).toHaveLength(0);
  });
});

describe("limits", () => {
  it(`reads answers up to ${MAX_ANSWER_BYTES / 1024} KiB, and throws a longer one, not read on`, async () => {
    const answerOf = (bytes: number) => () => new Response('{"name":"Fern"}'.padEnd(bytes, " "));
    const atLimit = clientOnFakes({ answerPlants: answerOf(MAX_ANSWER_BYTES) });
    expect(await atLimit.create()).toEqual({ name: "Fern" });
    const over = clientOnFakes({ answerPlants: answerOf(MAX_ANSWER_BYTES + 1) });
    await expect(over.create()).rejects.toMatchObject({ kind: "unexpected-answer", status: 200 });
  });

  it("is over within retry.deadlineMs, a slow token endpoint's time included", async () => {
    const clock = new FakeClock({ now: START });
    const { failure } = clientOnFakes({
      clock,
      answerToken: answerAfter(clock, 4000, () => tokenAnswer("token-1")),
      answerPlants: neverAnswers,
      options: { retry: { deadlineMs: 10_000 } },
    });
    expect(await failure()).toMatchObject({ name: "PlantStoreError", kind: "timeout", status: undefined });
    expect(clock.now() - START).toBeGreaterThan(9_000);
    expect(clock.now() - START).toBeLessThanOrEqual(10_000);
  });
});
