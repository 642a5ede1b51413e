/** The client against a scripted fetch on a virtual clock: ids, answers, errors and retries, without real waits. */
import { readdirSync, readFileSync } from "node:fs";
import { posix } from "node:path";
import { describe, expect, it } from "vitest";
import {
  createPlantStoreClient,
  type FetchFunction,
  type PlantStoreClientOptions,
  PlantStoreError,
  type RetryOptions,
} from "../../client/index.ts";
import { FakeClock } from "../support/fake-clock.ts";
import {
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

describe("where it sends: absolute http(s) URLs only, refused when the client is made", () => {
  it.each([
    ["a host and port with no scheme (parsed as the scheme `localhost:`)", "localhost:3000"],
    ["another scheme", "ftp://x/"],
    ["a path", "/plants"],
    ["an empty string", ""],
  ])("refuses a baseUrl of %s with a TypeError naming it", (_case, baseUrl) => {
    const { fetch, requests } = scriptedFetch(new FakeClock(), echoPlant);
    expect(() => createPlantStoreClient({ baseUrl, credentials: CREDENTIALS, fetch })).toThrow(
      new TypeError(
        `baseUrl must be an absolute http(s) URL such as https://api.example.com, got ${JSON.stringify(baseUrl)}`,
      ),
    );
    expect(requests).toHaveLength(0);
  });

  it.each(["localhost:3000/oauth2/token", "ftp://auth.example.test/oauth2/token"])(
    "refuses a credentials.tokenUrl of %s with a TypeError naming it (a token URL is no secret)",
    (tokenUrl) => {
      expect(() =>
        createPlantStoreClient({ baseUrl: BASE_URL, credentials: { ...CREDENTIALS, tokenUrl } }),
      ).toThrow(
        new TypeError(
          `credentials.tokenUrl must be an absolute http(s) URL such as https://auth.example.com/oauth2/token, got ${JSON.stringify(tokenUrl)}`,
        ),
      );
    },
  );

  it("takes http and https URLs, in any letter case", () => {
    for (const baseUrl of ["http://127.0.0.1:3000", "HTTPS://plants.example.test/prod/plants"]) {
      expect(createPlantStoreClient({ baseUrl, credentials: CREDENTIALS }).plantsUrl).toMatch(/^https?:\/\//);
    }
  });
});

describe("errors", () => {
  it.each([
    [504, { message: "Gateway Timeout" }, true],
    [502, { message: "Internal Server Error" }, true],
    [503, { error: 503, message: "the plant store is unavailable; nothing was written, retry later" }, false],
    [409, { error: 409, message: "a plant with id 1 already exists with another name or tag" }, false],
  ] as const)(
    "after a %i, says whether the plant may have been stored: %o",
    async (status, body, unknown) => {
      const { create } = setup(() => json(status, body));
      const error = (await create({ id: 1, name: "Fern" }).catch((thrown: unknown) => thrown)) as Error;
      // A gateway that got no answer from the function cannot tell whether the write landed; the API's own
      // answers say what is known in their message.
      expect(error.message.endsWith("sending the same create again is safe (200 if it was)")).toBe(unknown);
      // What Node prints of it (its stack) says so too.
      expect(error.stack?.split("\n")[0]?.endsWith("(200 if it was)")).toBe(unknown);
      expect(error).toMatchObject({ status, attempts: status === 409 ? 1 : 3 });
    },
  );

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

  it("counts every request sent in attempts, also when a retry is answered with a failure not retried", async () => {
    let answered = 0;
    const { create, plantRequests } = setup(() =>
      ++answered === 1
        ? json(503, { error: 503, message: "store unavailable" }, { "retry-after": "1" })
        : json(409, { error: 409, message: "a different plant is stored under id 7" }),
    );
    await expect(create({ id: 7, name: "Ivy" })).rejects.toMatchObject({ status: 409, attempts: 2 });
    expect(plantRequests()).toHaveLength(2);
  });

  it.each([400, 403, 413, 415, 500])("does not retry a %i", async (status) => {
    const { create, plantRequests } = setup(() => json(status, { error: status, message: "no" }));
    await expect(create({ id: 7, name: "Ivy" })).rejects.toMatchObject({ status });
    expect(plantRequests()).toHaveLength(1);
  });

  it("never puts the token or the client secret into a message, even when the server repeats them", async () => {
    const { create } = setup(() =>
      json(400, { error: 400, message: `bad token ${TOKEN} and secret ${CREDENTIALS.clientSecret}` }),
    );
    const error = (await create({ id: 7, name: "Ivy" }).catch((thrown: unknown) => thrown)) as Error;
    expect(error.message).toContain("[redacted]");
    expect(error.message).not.toContain(TOKEN);
    expect(error.message).not.toContain(CREDENTIALS.clientSecret);
  });

  it("names API Gateway's own 404 body", async () => {
    const { create } = setup(() => json(404, { message: "Not Found" }));
    const error = (await create({ id: 7, name: "Ivy" }).catch((thrown: unknown) => thrown)) as Error;
    expect(error).toMatchObject({ kind: "not-found", status: 404, serverMessage: "Not Found" });
    expect(error.message).toBe(`POST ${PLANTS_URL} answered 404: Not Found`);
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

  it("throws the last 503 with its Retry-After after maxAttempts", async () => {
    const { create, plantRequests } = setup(() =>
      json(503, { error: 503, message: "store unavailable" }, { "retry-after": "1" }),
    );
    await expect(create({ id: 1, name: "Fern" })).rejects.toMatchObject({
      status: 503,
      retryAfterSeconds: 1,
      attempts: 3,
    });
    expect(plantRequests()).toHaveLength(3);
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

  it("honours a 429's Retry-After up to a cap", async () => {
    let answered = 0;
    const { create, plantRequests } = setup(
      (request) =>
        ++answered === 1
          ? json(429, { message: "Too Many Requests" }, { "retry-after": "3600" })
          : echoPlant(request, undefined),
      { retry: { maxRetryAfterMs: 2500 } },
    );
    await create({ id: 1, name: "Fern" });
    expect(plantRequests().map((request) => request.at - START)).toEqual([0, 2500]);
  });

  it.each([
    ["an HTTP-date 2 s ahead", (now: number) => new Date(now + 2000).toUTCString(), 2000],
    ["1.5, not a delay-seconds", () => "1.5", 50],
    ["-1", () => "-1", 50],
    ["a date in another format", (now: number) => new Date(now + 2000).toISOString(), 50],
    // As the AWS SDKs' standard mode: never shorter than the backoff, so no burst of immediate retries.
    ["0", () => "0", 50],
    ["an HTTP-date already past", (now: number) => new Date(now - 60_000).toUTCString(), 50],
  ])(
    "reads a Retry-After of %s as RFC 9110 does (else, or when shorter, the jittered backoff)",
    async (_case, value, waited) => {
      let answered = 0;
      const { create, plantRequests, clock } = setup(
        (request) =>
          ++answered === 1
            ? json(503, { error: 503, message: "down" }, { "retry-after": value(clock.now()) })
            : echoPlant(request, undefined),
        { retry: { baseDelayMs: 100 } },
      );
      await create({ id: 1, name: "Fern" });
      expect(plantRequests().map((request) => request.at - START)).toEqual([0, waited]);
    },
  );

  it("gives up at once when the wait asked for would pass the deadline", async () => {
    const { create, plantRequests } = setup(
      () => json(503, { error: 503, message: "down" }, { "retry-after": "2" }),
      {
        retry: { deadlineMs: 1500 },
      },
    );
    await expect(create({ id: 1, name: "Fern" })).rejects.toMatchObject({ status: 503, attempts: 1 });
    expect(plantRequests()).toHaveLength(1);
  });

  it("backs off with full jitter: random × min(cap, base × 2^n)", async () => {
    const { create, plantRequests } = setup(() => json(503, { error: 503, message: "down" }), {
      retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 300 },
      random: () => 0.5,
    });
    await expect(create({ id: 1, name: "Fern" })).rejects.toMatchObject({ status: 503 });
    expect(plantRequests().map((request) => request.at - START)).toEqual([0, 50, 150, 300]);
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

  it("throws a timeout naming the URL when every attempt times out", async () => {
    const { create, plantRequests } = setup((_request, signal) => neverAnswers(signal), {
      retry: { attemptTimeoutMs: 1000 },
    });
    const error = (await create({ id: 1, name: "Fern" }).catch(
      (thrown: unknown) => thrown,
    )) as PlantStoreError;
    expect(error).toBeInstanceOf(PlantStoreError);
    // Sent, and never answered: the plant may be stored, and the message says what the caller may do.
    expect(error.message).toBe(
      `POST ${PLANTS_URL}: no answer within 1000 ms; the plant may have been stored: sending the same create again is safe (200 if it was)`,
    );
    expect(error.status).toBeUndefined();
    expect(plantRequests()).toHaveLength(3);
  });

  it("stops at once, with the caller's reason, when the caller's signal aborts; nothing more is sent", async () => {
    const controller = new AbortController();
    const { create, plantRequests } = setup(
      (_request, signal) => {
        queueMicrotask(() => controller.abort(new Error("shutting down")));
        return neverAnswers(signal);
      },
      { signal: controller.signal },
    );
    await expect(create({ id: 1, name: "Fern" })).rejects.toThrow("shutting down");
    expect(plantRequests()).toHaveLength(1);
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

  it("takes a clock of now and setTimer alone, as before the one clock, and waits with its timers", async () => {
    const fake = new FakeClock({ now: START });
    const timers: number[] = [];
    const timersOnly = {
      now: () => fake.now(),
      setTimer(callback: () => void, ms: number) {
        timers.push(ms);
        return fake.setTimer(callback, ms);
      },
    };
    let answered = 0;
    const { client, plantRequests } = setup(
      (request) =>
        ++answered === 1
          ? json(503, { error: 503, message: "down" }, { "retry-after": "1" })
          : echoPlant(request, undefined),
      { clock: timersOnly },
    );
    expect(await settle(fake, client.createPlant({ id: 1, name: "Fern" }))).toEqual({ name: "Fern" });
    expect(plantRequests()).toHaveLength(2);
    expect(fake.now() - START).toBe(1000);
    // The attempts' timeouts (5 s each), and between them the Retry-After's wait.
    expect(timers).toEqual([5000, 5000, 1000, 5000]);
    expect(fake.sleeps).toEqual([]);
  });

  it("refuses retry settings that make no sense", () => {
    expect(() => setup(echoPlant, { retry: { maxAttempts: 0 } })).toThrow(/retry\.maxAttempts/);
    expect(() => setup(echoPlant, { retry: { deadlineMs: -1 } })).toThrow(/retry\.deadlineMs/);
    // Past 2^31 - 1 ms a timer fires at once: every attempt would time out as it starts.
    expect(() => setup(echoPlant, { retry: { deadlineMs: 2 ** 31 } })).toThrow(/retry\.deadlineMs/);
    expect(() => setup(echoPlant, { retry: { attemptTimeoutMs: 3e9 } })).toThrow(/retry\.attemptTimeoutMs/);
    expect(() => setup(echoPlant, { retry: { deadlineMs: 2 ** 31 - 1 } })).not.toThrow();
  });

  it("refuses no time at all for an attempt or a call, which would fail every call; takes no wait at all", () => {
    for (const key of ["attemptTimeoutMs", "deadlineMs"]) {
      expect(() => setup(echoPlant, { retry: { [key]: 0 } })).toThrow(
        new TypeError(`retry.${key} must be a number of ms from 1 to ${2 ** 31 - 1}, got 0`),
      );
    }
    expect(() =>
      setup(echoPlant, { retry: { baseDelayMs: 0, maxDelayMs: 0, maxRetryAfterMs: 0 } }),
    ).not.toThrow();
    // An option given as undefined is the default, as when it is absent.
    expect(() => setup(echoPlant, { retry: { deadlineMs: undefined }, signal: undefined })).not.toThrow();
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

describe("what can never be sent is refused before anything is: a TypeError, no request", () => {
  const madeWith = (extra: Partial<PlantStoreClientOptions>) => {
    const { fetch, requests } = scriptedFetch(new FakeClock(), echoPlant);
    const make = () =>
      createPlantStoreClient({ baseUrl: BASE_URL, credentials: CREDENTIALS, fetch, ...extra });
    return { make, requests };
  };

  it("a URL holding a user and password (fetch refuses one on every call), without repeating them", () => {
    for (const [option, extra] of [
      ["baseUrl", { baseUrl: "http://user:pa55word@127.0.0.1:3000" }],
      [
        "credentials.tokenUrl",
        { credentials: { ...CREDENTIALS, tokenUrl: "https://user:pa55word@auth.example.test/t" } },
      ],
    ] as const) {
      const { make } = madeWith(extra);
      expect(make).toThrow(new TypeError(`${option} must not hold a user name or password (user:password@)`));
      expect(() => make()).not.toThrow(/pa55word/);
    }
  });

  it("a fetch or a random that is no function", () => {
    expect(madeWith({ fetch: "fetch" as unknown as FetchFunction }).make).toThrow(
      new TypeError("fetch must be a function, got string"),
    );
    expect(madeWith({ random: 0.5 as unknown as () => number }).make).toThrow(
      new TypeError("random must be a function, got number"),
    );
  });

  it("a token that is no bearer token, fixed or given by the token function, without showing it", async () => {
    const notBearer = "abc def\nghi";
    expect(madeWith({ credentials: { token: notBearer } }).make).toThrow(
      new TypeError(
        "credentials.token is not a bearer token (RFC 6750: letters, digits and -._~+/, then any = signs); it is not shown",
      ),
    );
    const { make, requests } = madeWith({ credentials: { token: () => notBearer } });
    const error = await make()
      .createPlant({ id: 1, name: "Fern" })
      .catch((thrown: unknown) => thrown);
    expect(error).toEqual(
      new TypeError(
        "the token function's token is not a bearer token (RFC 6750: letters, digits and -._~+/, then any = signs); it is not shown",
      ),
    );
    expect(requests).toHaveLength(0);
  });

  it("createPlant's options that are no object, a name it does not take, a signal that is none", async () => {
    const { make, requests } = madeWith({});
    const client = make();
    const plant = { id: 1, name: "Fern" };
    const call = (options: unknown) =>
      client.createPlant(plant, options as { signal?: AbortSignal }).catch((thrown: unknown) => thrown);
    expect(await call(null)).toEqual(
      new TypeError("createPlant's options must be an object such as { signal }"),
    );
    expect(await call({ singal: new AbortController().signal })).toEqual(
      new TypeError("unknown option 'singal': createPlant takes only signal"),
    );
    expect(await call({ signal: "stop" })).toEqual(
      new TypeError("createPlant's signal must be an AbortSignal"),
    );
    expect(requests).toHaveLength(0);
  });
});

describe("the client module runs outside Node", () => {
  it("imports only its own client/ modules, none using Node: it ships nothing of the function's", () => {
    const repository = new URL("../../", import.meta.url);
    // Its sources, never its dist/, which a parallel test's `npm pack` may be rewriting meanwhile.
    const clientFiles = ["", "generated/"].flatMap((folder) =>
      readdirSync(new URL(`client/${folder}`, repository))
        .filter((file) => file.endsWith(".ts"))
        .map((file) => `client/${folder}${file}`),
    );
    expect(clientFiles).toContain("client/index.ts");
    expect(clientFiles).toContain("client/generated/plant-schema.ts");
    const reached = new Set<string>();
    const pending = [...clientFiles];
    for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
      if (reached.has(file)) continue;
      reached.add(file);
      const source = readFileSync(new URL(file, repository), "utf8");
      const imports = [...source.matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)].map(
        (match) => match[1] ?? "",
      );
      for (const specifier of imports) {
        expect(specifier, `${file} imports ${specifier}`).toMatch(/^\.\.?\/[\w./-]+\.ts$/);
        const target = posix.normalize(posix.join(posix.dirname(file), specifier));
        expect(target, `${file} imports ${specifier}`).toMatch(/^client\/[\w/-]+\.ts$/);
        pending.push(target);
      }
      expect(source, file).not.toMatch(/\b(Buffer|process|require)\b/);
    }
  });
});
