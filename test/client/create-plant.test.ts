import { describe, expect, it } from "vitest";
import { NEW_PLANT_PROPERTIES } from "../../client/generated/openapi.ts";
import {
  createPlantStoreClient,
  MAX_ANSWER_BYTES,
  type PlantStoreClientOptions,
  PlantStoreError,
  type RetryOptions,
} from "../../client/index.ts";
import { FakeClock } from "../support/fake-clock.ts";
import {
  answerAfter,
  BASE_URL,
  CREDENTIALS,
  clientOnFakes,
  json,
  neverAnswers,
  PLANTS_URL,
  type Responder,
  START,
  scriptedFetch,
  settle,
  tokenAnswer,
} from "./fakes.ts";

const TOKEN = "header.payload-1.signature";

/** A client whose token endpoint always gives TOKEN, and whose API answers with `answerPlants`. */
function setup(answerPlants: Responder, options: Partial<PlantStoreClientOptions> = {}) {
  const fakes = clientOnFakes({
    answerPlants,
    answerToken: () => tokenAnswer(TOKEN),
    options: { random: () => 0.5, ...options },
  });
  const { clock, client } = fakes;
  return {
    ...fakes,
    create: (plant: Parameters<typeof client.createPlant>[0]) => settle(clock, client.createPlant(plant)),
  };
}

const echoPlant: Responder = (request) => {
  const { name, tag } = JSON.parse(request.body) as { name: string; tag?: string };
  return json(200, tag === undefined ? { name } : { name, tag });
};

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
    const { create, plantRequests } = setup(echoPlant);
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
    const { client, requests } = setup(echoPlant);
    const refusal = await client.createPlant({ id, name: "Fern" }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(TypeError);
    expect((refusal as TypeError).message).toContain(named);
    expect(requests).toHaveLength(0);
  });

  it("writes names with quotes, backslashes and non-ASCII as JSON, and reads the answer's Plant fields only", async () => {
    const { create, plantRequests } = setup(
      () => new Response('{"name":"F\\"ern ☘","id":9223372036854775807,"later":"x"}', { status: 200 }),
    );
    expect(await create({ id: 1n, name: 'F"ern ☘\\' })).toEqual({ name: 'F"ern ☘' });
    expect(JSON.parse(plantRequests()[0]?.body ?? "")).toEqual({ id: 1, name: 'F"ern ☘\\' });
  });
});

describe("requests", () => {
  it("posts JSON with the bearer token to {base_url}/plants, also when given the stack's ApiUrl (…/plants)", async () => {
    for (const baseUrl of [BASE_URL, `${BASE_URL}/`, PLANTS_URL]) {
      const { create, plantRequests } = setup(echoPlant, { baseUrl });
      await create({ id: 1, name: "Fern" });
      const [request] = plantRequests();
      expect(request?.method).toBe("POST");
      expect(request?.headers.get("authorization")).toBe(`Bearer ${TOKEN}`);
      expect(request?.headers.get("content-type")).toBe("application/json");
    }
  });
});

describe("errors", () => {
  it("throws a 409 as a PlantStoreError with the API's fields and request id, and does not retry it", async () => {
    const { create, plantRequests } = setup(() =>
      json(
        409,
        { error: 409, message: "a different plant is stored under id 7" },
        { "apigw-requestid": "Abc123=" },
      ),
    );
    const error = await create({ id: 7, name: "Ivy" }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error).toMatchObject({
      name: "PlantStoreError",
      kind: "conflict",
      status: 409,
      serverMessage: "a different plant is stored under id 7",
      requestId: "Abc123=",
      attempts: 1,
    });
    expect((error as Error).message).toBe(
      `POST ${PLANTS_URL} answered 409: a different plant is stored under id 7`,
    );
    expect(plantRequests()).toHaveLength(1);
  });

  it.each([
    [400, "invalid-request"],
    [401, "unauthorized"],
    [403, "forbidden"],
    [413, "invalid-request"],
    [429, "throttled"],
    [500, "server-error"],
    [503, "unavailable"],
    [504, "unavailable"],
    [202, "unexpected-answer"],
  ] as const)("gives a %i the kind %s to switch on", async (status, kind) => {
    const { create } = setup(() => json(status, { error: status, message: "said the server" }));
    const error = (await create({ id: 7, name: "Ivy" }).catch(
      (thrown: unknown) => thrown,
    )) as PlantStoreError;
    expect(error).toBeInstanceOf(PlantStoreError);
    expect(error).toMatchObject({ kind, status, serverMessage: "said the server" });
  });

  it("gives no answer the kind network, and every attempt timing out the kind timeout, with no status", async () => {
    const refused = setup(() => {
      throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
    });
    await expect(refused.create({ id: 7, name: "Ivy" })).rejects.toMatchObject({
      kind: "network",
      status: undefined,
      serverMessage: undefined,
      attempts: 3,
    });
    const silent = setup((_request, signal) => neverAnswers(signal), { retry: { attemptTimeoutMs: 1000 } });
    await expect(silent.create({ id: 7, name: "Ivy" })).rejects.toMatchObject({
      kind: "timeout",
      status: undefined,
      attempts: 3,
    });
  });
});

describe("retries: 503, 429, no answer and timeouts, with backoff, inside the deadline", () => {
  it("answers the plant after two 503s with Retry-After: 1, with 3 requests about 2 s apart in all", async () => {
    let answered = 0;
    const { create, plantRequests } = setup((request) =>
      ++answered <= 2
        ? json(503, { error: 503, message: "store unavailable" }, { "retry-after": "1" })
        : echoPlant(request, undefined),
    );
    expect(await create({ id: 9007199254740993n, name: "Fern" })).toEqual({ name: "Fern" });
    const times = plantRequests().map((request) => request.at - START);
    expect(times).toEqual([0, 1000, 2000]);
    expect(new Set(plantRequests().map((request) => request.body)).size).toBe(1);
  });

  it("stops retrying once its retry quota is spent in an outage, and earns it back with successes", async () => {
    let outage = true;
    const { create, plantRequests } = setup((request, signal) =>
      outage
        ? json(503, { error: 503, message: "store unavailable" }, { "retry-after": "0" })
        : echoPlant(request, signal),
    );
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

  it("retries a request that got no answer, and one that timed out after it was sent", async () => {
    let answered = 0;
    const { create, plantRequests } = setup(
      (request, signal) => {
        answered++;
        if (answered === 1) throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } });
        if (answered === 2) return neverAnswers(signal);
        return echoPlant(request, undefined);
      },
      { retry: { attemptTimeoutMs: 1000 }, random: () => 0 },
    );
    expect(await create({ id: 1, name: "Fern" })).toEqual({ name: "Fern" });
    expect(plantRequests().map((request) => request.at - START)).toEqual([0, 0, 1000]);
  });

  it("runs 20 calls at once on one client signal without Node's listener-leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    try {
      const { client } = setup(
        (request) => new Promise((resolve) => setTimeout(() => resolve(echoPlant(request, undefined)), 5)),
        { signal: new AbortController().signal },
      );
      const calls = Array.from({ length: 20 }, (_, index) =>
        client.createPlant({ id: index + 1, name: "Fern" }),
      );
      expect(await Promise.all(calls)).toHaveLength(20);
      await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on the next tick
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it("refuses a name it does not know, in the options or in retry, naming it and those it takes, and a retry that is no object", () => {
    const { fetch } = scriptedFetch(new FakeClock(), echoPlant);
    const options = { baseUrl: BASE_URL, credentials: CREDENTIALS, fetch };
    expect(() =>
      createPlantStoreClient({ ...options, retries: { maxAttempts: 5 } } as PlantStoreClientOptions),
    ).toThrow(
      new TypeError(
        "unknown option 'retries': createPlantStoreClient takes only baseUrl, credentials, fetch, retry, signal, clock, random",
      ),
    );
    expect(() => createPlantStoreClient({ ...options, retry: { maxAttempt: 5 } as RetryOptions })).toThrow(
      new TypeError(
        "unknown option 'retry.maxAttempt': retry takes only maxAttempts, deadlineMs, attemptTimeoutMs, baseDelayMs, maxDelayMs, maxRetryAfterMs",
      ),
    );
    expect(() => createPlantStoreClient({ ...options, retry: 3 as RetryOptions })).toThrow(
      new TypeError("retry must be an object such as { maxAttempts: 3 }, got 3"),
    );
    const numericScope = { ...CREDENTIALS, scope: 5 } as unknown as PlantStoreClientOptions["credentials"];
    expect(() => createPlantStoreClient({ ...options, credentials: numericScope })).toThrow(
      new TypeError("credentials.scope must be a string of space-separated scopes"),
    );
  });
});

describe("a property the contract does not have", () => {
  // Not a plausible field, so this holds whatever fields the contract gains.
  const NOT_A_FIELD = "not a field";

  it("is refused with a TypeError naming it, before any token or request", async () => {
    const { client, requests } = setup(echoPlant);
    const typo = { id: 5n, name: "Fern", [NOT_A_FIELD]: "x" };
    // @ts-expect-error a NewPlant has no such property: even a variable (not only a literal) of that type is refused
    const refusal = await client.createPlant(typo).catch((thrown: unknown) => thrown);
    expect(refusal).toBeInstanceOf(TypeError);
    expect((refusal as Error).message).toBe(
      `unknown property '${NOT_A_FIELD}': a NewPlant has only ${Object.keys(NEW_PLANT_PROPERTIES).join(", ")}`,
    );
    expect(requests).toHaveLength(0);
  });
});

describe("limits", () => {
  it(`reads answers up to ${MAX_ANSWER_BYTES / 1024} KiB, and throws a longer one, not read on`, async () => {
    const long = `{"name":"${"F".repeat(MAX_ANSWER_BYTES)}"}`;
    const { create } = setup(() => new Response(long, { status: 200 }));
    await expect(create({ id: 1, name: "Fern" })).rejects.toMatchObject({
      kind: "unexpected-answer",
      status: 200,
    });
  });

  it("is over within retry.deadlineMs, a slow token endpoint's time included", async () => {
    const clock = new FakeClock({ now: START });
    const { client } = clientOnFakes({
      clock,
      answerToken: answerAfter(clock, 4000, () => tokenAnswer(TOKEN)),
      answerPlants: (_request, signal) => neverAnswers(signal),
      options: { retry: { deadlineMs: 10_000 } },
    });
    const error = await settle(clock, client.createPlant({ id: 1, name: "Fern" })).catch(
      (thrown: unknown) => thrown,
    );
    expect(error).toMatchObject({ name: "PlantStoreError", kind: "timeout" });
    expect(clock.now() - START).toBeGreaterThan(9_000);
    expect(clock.now() - START).toBeLessThanOrEqual(10_000);
  });
});
